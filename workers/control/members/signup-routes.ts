import { createRoute } from "@hono/zod-openapi";
import { createWebSession, csrfTokenFor } from "../../auth/session-store";
import { setSessionCookie } from "../../auth/web-session";
import { database } from "../../db/client";
import { controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { previewInvite } from "./invites";
import { InvitePreviewSchema, InviteTokenParamSchema, SignupBodySchema, SignupResultSchema } from "./schemas";
import { signUpWithInvite } from "./signup";

/**
 * Sign-up by invite, for someone with no account yet: no credentials but the invite token (both paths
 * are public in auth/middleware.ts). The body is JSON only, which a cross-site HTML form cannot send:
 * the same CSRF defence as the login's.
 */
export const signupRoutes = createRouter();

const tags = ["Members"];
const { 400: badBody, 404: unknownInvite } = controlErrors;

signupRoutes.openapi(
  createRoute({
    method: "get",
    path: "/member-invites/{token}/signup",
    tags,
    summary: "What an invite link offers someone signed out (no credentials: the token is one)",
    description:
      "The same as GET /member-invites/{token}, for the sign-up page: company, role, the e-mail the " +
      "invite is bound to (only such an invite creates accounts), the owner's note and whether it still works.",
    request: { params: InviteTokenParamSchema },
    responses: { 200: json(InvitePreviewSchema, "The invite"), 400: badBody, 404: unknownInvite },
  }),
  async (c) => c.json(await previewInvite(database(c.env.DB), c.req.valid("param").token), 200),
);

signupRoutes.openapi(
  createRoute({
    method: "post",
    path: "/member-invites/{token}/signup",
    tags,
    summary: "Create an account from an invite bound to an e-mail and join its company, signed in at once",
    description:
      "No credentials: the token proves the invite's e-mail, which becomes the account's. The account's " +
      "instance role is STAFF; the membership takes the invite's role; the answer sets the " +
      "`web-auth.session-token` cookie. Single use: of two sign-ups at once exactly one account is made. " +
      "Unknown token 404; an invite not bound to an e-mail 403 (sign in instead); `email` other than the " +
      "invite's 400; an account with that e-mail already exists 409 (`details.reason: account_exists`: " +
      "sign in, then accept); already used 409; expired or revoked 410. Records `member.joined`.",
    request: { params: InviteTokenParamSchema, ...jsonBody(SignupBodySchema) },
    responses: {
      201: json(SignupResultSchema, "Account created, joined and signed in"),
      400: badBody,
      403: controlError("The invite is not bound to an e-mail: it is for an existing account"),
      404: unknownInvite,
      409: controlError("An account with the e-mail exists, or the invite was already used"),
      410: controlError("Expired or revoked"),
    },
  }),
  async (c) => {
    const db = database(c.env.DB);
    const signed = await signUpWithInvite(db, c.req.valid("param").token, c.req.valid("json"));
    const session = await createWebSession(db, signed.user.id);
    setSessionCookie(c, session);
    return c.json(
      {
        companyId: signed.company.id,
        companyName: signed.company.name,
        role: signed.role,
        user: signed.user,
        csrfToken: await csrfTokenFor(session.token),
      },
      201,
    );
  },
);
