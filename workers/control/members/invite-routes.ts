import { createRoute } from "@hono/zod-openapi";
import { refOf } from "../../core/actor";
import { conflict } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { CompanyParamSchema } from "../companies";
import { companyForActor, controlContext, requireBoard, requireOwner } from "../shared";
import {
  acceptInvite,
  createInvite,
  inviteResource,
  listInvites,
  previewInvite,
  revokeInvite,
} from "./invites";
import {
  AcceptedInviteSchema,
  CreatedMemberInviteSchema,
  CreateMemberInviteBodySchema,
  InvitePreviewSchema,
  InviteTokenParamSchema,
  MEMBER_INVITE_DEFAULT_HOURS,
  MemberInviteListSchema,
  MemberInviteParamSchema,
  MemberInviteSchema,
} from "./schemas";

/** Invite links for people (owners create, list and revoke them; anyone signed in accepts one). */
export const memberInviteRoutes = createRouter();

const tags = ["Members"];

memberInviteRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/member-invites",
    tags,
    summary: "Create an invite link for a person (owners only)",
    description:
      "The token and the dashboard URL built from it are shown only in this response; only the token's " +
      "SHA-256 is stored. The link works once, until it expires or is revoked.",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(CreateMemberInviteBodySchema) },
    responses: { 201: json(CreatedMemberInviteSchema, "The invite, with its token"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    requireBoard(actor, "invite people");
    await requireOwner(db, actor, company.id, "invite people");
    const body = c.req.valid("json");
    const hours = body.expiresInHours ?? MEMBER_INVITE_DEFAULT_HOURS;
    const author = { type: "board" as const, userId: actor.userId };
    const { row, token } = await createInvite(db, author, company.id, { ...body, expiresInHours: hours });
    const url = `${new URL(c.req.url).origin}/invites/${token}`;
    return c.json({ ...inviteResource(row), token, url }, 201);
  },
);

memberInviteRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/member-invites",
    tags,
    summary: "List the company's invite links, newest first (owners only; never their tokens)",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(MemberInviteListSchema, "The invites"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    requireBoard(actor, "list invites");
    await requireOwner(db, actor, company.id, "list invites");
    const now = Date.now();
    const rows = await listInvites(db, company.id);
    return c.json({ invites: rows.map((row) => inviteResource(row, now)) }, 200);
  },
);

memberInviteRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/companies/{companyId}/member-invites/{inviteId}",
    tags,
    summary: "Revoke an invite link (owners only; idempotent)",
    security: controlAuth,
    request: { params: MemberInviteParamSchema },
    responses: {
      200: json(MemberInviteSchema, "The invite, revoked"),
      ...controlErrors,
      409: controlError("The invite was already used"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const params = c.req.valid("param");
    const company = await companyForActor(db, actor, params.companyId);
    requireBoard(actor, "revoke invites");
    await requireOwner(db, actor, company.id, "revoke invites");
    const row = await revokeInvite(db, refOf(actor), company.id, params.inviteId);
    return c.json(inviteResource(row), 200);
  },
);

memberInviteRoutes.openapi(
  createRoute({
    method: "get",
    path: "/member-invites/{token}",
    tags,
    summary: "What an invite link offers: company, role, and whether it still works (anyone signed in)",
    description: "The token is the credential: whoever holds it may see this. Agents get 403.",
    security: controlAuth,
    request: { params: InviteTokenParamSchema },
    responses: { 200: json(InvitePreviewSchema, "The invite"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    requireBoard(actor, "open invites");
    return c.json(await previewInvite(db, c.req.valid("param").token), 200);
  },
);

memberInviteRoutes.openapi(
  createRoute({
    method: "post",
    path: "/member-invites/{token}/accept",
    tags,
    summary: "Join the company of an invite link, with its role (any signed-in person; agents 403)",
    description:
      "Single use: of two accepts at once exactly one joins. Unknown token 404; already used 409; " +
      "expired or revoked 410; bound to another e-mail 403; already a member of the company 409 (the " +
      "link stays usable). " +
      "Records `member.joined`.",
    security: controlAuth,
    request: { params: InviteTokenParamSchema },
    responses: {
      200: json(AcceptedInviteSchema, "Joined"),
      ...controlErrors,
      409: controlError("Already used, or you are already a member"),
      410: controlError("Expired or revoked"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    requireBoard(actor, "accept invites");
    const accepted = await acceptInvite(
      db,
      { id: actor.userId, email: actor.user.email },
      c.req.valid("param").token,
    );
    if (accepted.kind === "already_member")
      throw conflict("You are already a member of this company", { companyId: accepted.company.id });
    return c.json(
      { companyId: accepted.company.id, companyName: accepted.company.name, role: accepted.role },
      200,
    );
  },
);
