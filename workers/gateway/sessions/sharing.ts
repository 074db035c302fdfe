import { createRoute, z } from "@hono/zod-openapi";
import { and, asc, eq, inArray } from "drizzle-orm";
import { liveHost, ownerTag, SHARE_ENDED } from "../../auth/live-sockets";
import { normaliseEmail } from "../../auth/user-store";
import type { Env } from "../../core/env";
import { type Db, database, iso } from "../../db/client";
import { type SessionRow, SHARE_ROLES, sessionAccess, users, webhooks } from "../../db/schema";
import { ok } from "../../http/envelope";
import { badRequest, conflict, notFound } from "../../http/errors";
import {
  authenticated,
  createRouter,
  errorResponse,
  gatewayErrors,
  gatewayOk,
  json,
  jsonBody,
} from "../../http/openapi";
import { callSession } from "./call";
import { AccessGrantSchema, SessionIdParamsSchema } from "./schemas";
import { loadAccessibleSession } from "./store";
import { pushWebhooks } from "./webhook-endpoints";

/**
 * Sharing a session with other people, by e-mail, as a viewer (reads) or an operator (also sends and
 * manages webhooks). Only the owner (or a SUPERADMIN) shares, deletes or logs out. A share is stored
 * by e-mail whether or not anyone has it yet, and every answer is the same either way: sharing does
 * not tell the caller which e-mails have accounts, or which one is the SUPERADMIN's.
 */
export const sessionSharingRoutes = createRouter();
const tags = ["Sessions"];
const errors = {
  ...gatewayErrors,
  403: errorResponse("Not the owner or a SUPERADMIN"),
  404: errorResponse("Session or share not found"),
};

const ShareBodySchema = z
  .strictObject({
    email: z.email().max(254),
    role: z.enum(SHARE_ROLES).default("operator").openapi({
      description: "viewer: reads only; operator (default): also sends and manages webhooks",
    }),
  })
  .openapi("ShareSessionBody");

const RevokeBodySchema = z
  .strictObject({
    email: z.email().max(254).optional(),
    userId: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .openapi({ description: "Kept for older clients: the user's e-mail is used" }),
  })
  .refine((body) => (body.email === undefined) !== (body.userId === undefined), "send email or userId")
  .openapi("RevokeShareBody");

const toShareResource = (
  session: Pick<SessionRow, "sessionId">,
  share: typeof sessionAccess.$inferSelect,
) => ({
  sessionId: session.sessionId,
  email: share.email,
  role: share.role,
  createdAt: iso(share.createdAt),
});

const sharesOf = (db: Db, sessionId: string) =>
  db
    .select()
    .from(sessionAccess)
    .where(eq(sessionAccess.sessionId, sessionId))
    .orderBy(asc(sessionAccess.createdAt));

sessionSharingRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{id}/access",
    tags,
    summary: "Who the session is shared with (e-mail and role)",
    security: authenticated,
    request: { params: SessionIdParamsSchema },
    responses: { 200: json(gatewayOk(z.array(AccessGrantSchema)), "Shares"), ...errors },
  }),
  async (c) => {
    const db = database(c.env.DB);
    const session = await loadAccessibleSession(db, c.get("principal"), c.req.valid("param").id, "own");
    const shares = await sharesOf(db, session.id);
    return c.json(
      ok(
        "Access list retrieved",
        shares.map((share) => toShareResource(session, share)),
      ),
      200,
    );
  },
);

sessionSharingRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{id}/access",
    tags,
    summary: "Share the session with an e-mail, or change that share's role",
    description:
      "201 when shared, 200 when the role changed, 409 when it already has that role. The answer does not " +
      "depend on whether anyone has this e-mail: whoever does, now or later, gets the role.",
    security: authenticated,
    request: { params: SessionIdParamsSchema, ...jsonBody(ShareBodySchema) },
    responses: {
      200: json(gatewayOk(AccessGrantSchema), "Role changed"),
      201: json(gatewayOk(AccessGrantSchema), "Shared"),
      ...errors,
      409: errorResponse("Already shared with this e-mail, with this role"),
    },
  }),
  async (c) => {
    const db = database(c.env.DB);
    const session = await loadAccessibleSession(db, c.get("principal"), c.req.valid("param").id, "own");
    const body = c.req.valid("json");
    const email = normaliseEmail(body.email);
    const owner = await db.query.users.findFirst({
      where: eq(users.id, session.userId),
      columns: { email: true },
    });
    if (owner && normaliseEmail(owner.email) === email) throw badRequest("The owner already has access");
    const existing = await db.query.sessionAccess.findFirst({
      where: and(eq(sessionAccess.sessionId, session.id), eq(sessionAccess.email, email)),
    });
    if (existing?.role === body.role)
      throw conflict("The session is already shared with this e-mail, with this role");
    const share = {
      sessionId: session.id,
      email,
      role: body.role,
      createdAt: existing?.createdAt ?? Date.now(),
    };
    await db
      .insert(sessionAccess)
      .values(share)
      .onConflictDoUpdate({
        target: [sessionAccess.sessionId, sessionAccess.email],
        set: { role: body.role },
      });
    const lowered =
      existing?.role === "operator" && body.role === "viewer"
        ? await stopWorkOf(c.env, session, email, `cancelled: ${email} was made a viewer of this session`)
        : "";
    const message = existing ? `Role changed${lowered}` : "Access granted";
    return c.json(ok(message, toShareResource(session, share)), existing ? 200 : 201);
  },
);

sessionSharingRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/{id}/access",
    tags,
    summary: "Stop sharing the session with an e-mail",
    description:
      "The webhooks that person created on this session are disabled (`access revoked`): they no longer " +
      "receive the owner's messages. Their pending scheduled messages are CANCELLED, their auto-replies " +
      "turned off and their running broadcasts cancelled, each with the reason (`lastError`, " +
      "`disabledReason`, `cancelReason`); the same happens when an operator is made a viewer.",
    security: authenticated,
    request: { params: SessionIdParamsSchema, ...jsonBody(RevokeBodySchema) },
    responses: { 200: json(gatewayOk(z.null()), "Revoked"), ...errors },
  }),
  async (c) => {
    const db = database(c.env.DB);
    const session = await loadAccessibleSession(db, c.get("principal"), c.req.valid("param").id, "own");
    const body = c.req.valid("json");
    const email = body.email ?? (await emailOf(db, body.userId ?? ""));
    const removed = email
      ? await db
          .delete(sessionAccess)
          .where(and(eq(sessionAccess.sessionId, session.id), eq(sessionAccess.email, normaliseEmail(email))))
          .returning({ email: sessionAccess.email })
      : [];
    if (removed.length === 0) throw notFound("Share not found", "The session is not shared with this e-mail");
    const revoked = normaliseEmail(email ?? "");
    await cutViewersOf(c.env, db, session.id, revoked);
    if (await disableWebhooksOf(db, session.id, revoked)) await pushWebhooks(c.env, session.id);
    const stopped = await stopWorkOf(c.env, session, revoked, `cancelled: ${revoked}'s access was revoked`);
    return c.json(ok(`Access revoked${stopped}`, null), 200);
  },
);

/**
 * What the people holding `email` set up on the session stops with their access: pending scheduled
 * messages are cancelled and auto-replies turned off, with `reason`. Returns a note for the answer
 * ("" when nothing stopped). If the object cannot be reached, the share is gone anyway and each send
 * re-checks its creator's access (durable-objects/messaging/access.ts), so nothing is sent either way.
 */
async function stopWorkOf(
  env: Env,
  session: Pick<SessionRow, "id">,
  email: string,
  reason: string,
): Promise<string> {
  const holders = await database(env.DB).select({ id: users.id }).from(users).where(eq(users.email, email));
  if (holders.length === 0) return "";
  try {
    const stopped = await callSession(env, session, "access.ended", {
      userIds: holders.map((holder) => holder.id),
      reason,
    });
    const { scheduledCancelled: scheduled, autoRepliesDisabled: rules, broadcastsCancelled: jobs } = stopped;
    if (scheduled + rules + jobs === 0) return "";
    return `; ${scheduled} scheduled message(s) cancelled, ${rules} auto-reply(ies) turned off, ${jobs} broadcast(s) cancelled`;
  } catch (error) {
    console.error(JSON.stringify({ msg: "revoked share's work not stopped now", error: String(error) }));
    return "";
  }
}

async function emailOf(db: Db, userId: string): Promise<string | undefined> {
  const user = await db.query.users.findFirst({ where: eq(users.id, userId), columns: { email: true } });
  return user?.email;
}

/**
 * Closes the session's live sockets (the pairing page: QR, status) of whoever has `email`, before the
 * revocation answers: their share ended, so the view they were sent at connect must stop here too.
 */
async function cutViewersOf(env: Env, db: Db, sessionId: string, email: string): Promise<void> {
  const holders = await db.select({ id: users.id }).from(users).where(eq(users.email, email));
  const session = liveHost(env, { binding: "SESSION", name: sessionId });
  const { code, reason } = SHARE_ENDED;
  await Promise.all(
    holders.map((holder) => session.cutSockets(ownerTag({ kind: "user", id: holder.id }), code, reason)),
  );
}

/** The session's webhooks created by whoever has `email`: disabled, so the revoked share ends there too. */
async function disableWebhooksOf(db: Db, sessionId: string, email: string): Promise<boolean> {
  const holders = db.select({ id: users.id }).from(users).where(eq(users.email, email));
  const disabled = await db
    .update(webhooks)
    .set({ isActive: false, disabledReason: "access revoked", updatedAt: Date.now() })
    .where(
      and(
        eq(webhooks.sessionId, sessionId),
        inArray(webhooks.createdByUserId, holders),
        eq(webhooks.isActive, true),
      ),
    )
    .returning({ id: webhooks.id });
  return disabled.length > 0;
}
