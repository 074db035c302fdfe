import { createRoute } from "@hono/zod-openapi";
import { agentCredentialsChanged } from "../../auth/agent-key-store";
import { cutLiveSockets, MEMBERSHIP_ENDED, ROLE_CHANGED } from "../../auth/live-sockets";
import { refOf } from "../../core/actor";
import { badRequest } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { CompanyParamSchema } from "../companies";
import { companyForActor, controlContext, requireBoard, requireOwner } from "../shared";
import {
  MemberListSchema,
  MemberParamSchema,
  MemberSchema,
  RemoveMemberQuerySchema,
  UpdateMemberBodySchema,
} from "./schemas";
import { changeRole, findMember, listMembers, memberOrNotFound, removeMember } from "./store";

/** A company's people: who is in it with which role; role changes, removal and leaving. */
export const memberRoutes = createRouter();

const tags = ["Members"];

memberRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/members",
    tags,
    summary: "List the company's members (board users of the company, any role)",
    description: "Owners first, then members, then viewers. Agents get 403: members are people.",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(MemberListSchema, "The members"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    requireBoard(actor, "list members");
    return c.json({ members: await listMembers(db, company.id) }, 200);
  },
);

memberRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/members/me",
    tags,
    summary: "Your own membership: your role in the company",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(MemberSchema, "Your membership"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    requireBoard(actor, "have a membership");
    return c.json(memberOrNotFound(await findMember(db, company.id, actor.userId)), 200);
  },
);

memberRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/companies/{companyId}/members/{userId}",
    tags,
    summary: "Change a member's role (owners only)",
    description:
      "409 when it would leave the company without an owner. The change holds for the member's very " +
      "next write; records `member.role_changed`.",
    security: controlAuth,
    request: { params: MemberParamSchema, ...jsonBody(UpdateMemberBodySchema) },
    responses: {
      200: json(MemberSchema, "The membership as it is now"),
      ...controlErrors,
      409: controlError("The last owner cannot be demoted"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const params = c.req.valid("param");
    const company = await companyForActor(db, actor, params.companyId);
    requireBoard(actor, "change roles");
    await requireOwner(db, actor, company.id, "change members' roles");
    const target = memberOrNotFound(await findMember(db, company.id, params.userId));
    const updated = await changeRole(db, refOf(actor), company.id, target, c.req.valid("json").role);
    // Their open pages were drawn for the old role: they reload (a viewer's lose the controls at once).
    if (updated.role !== target.role)
      await cutLiveSockets(c.env, { kind: "user", id: target.userId }, ROLE_CHANGED, company.id);
    return c.json(updated, 200);
  },
);

memberRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/companies/{companyId}/members/{userId}",
    tags,
    summary: "Remove a member (owners), or leave (your own user id, any role)",
    description:
      "409 when the member is the company's last owner (make someone else an owner first). Takes effect " +
      "at once for writes; records `member.removed` or `member.left`. The agent keys the member minted " +
      "in the company are revoked with the membership (`agentKeys=revoke`, the default: they answer 401 " +
      "at once), or, when an owner removes someone else with `agentKeys=transfer`, re-owned by that owner.",
    security: controlAuth,
    request: { params: MemberParamSchema, query: RemoveMemberQuerySchema },
    responses: {
      204: { description: "Removed" },
      ...controlErrors,
      409: controlError("The last owner cannot leave or be removed"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const params = c.req.valid("param");
    const company = await companyForActor(db, actor, params.companyId);
    requireBoard(actor, "remove members");
    const leaving = params.userId === actor.userId;
    if (!leaving) await requireOwner(db, actor, company.id, "remove other members");
    const { agentKeys } = c.req.valid("query");
    if (leaving && agentKeys === "transfer")
      throw badRequest("agentKeys: the keys of a member who leaves are revoked; an owner can transfer them");
    const target = memberOrNotFound(await findMember(db, company.id, params.userId));
    const removal = await removeMember(db, refOf(actor), company.id, target, agentKeys);
    // Their open board, issue and run pages stop here too, before this answers.
    await cutLiveSockets(c.env, { kind: "user", id: target.userId }, MEMBERSHIP_ENDED, company.id);
    // Revoked keys end the agents' open sockets and cached answers as any key revocation does.
    if (agentKeys === "revoke")
      for (const agentId of removal.agentIds) await agentCredentialsChanged(c.env, agentId);
    return c.body(null, 204);
  },
);
