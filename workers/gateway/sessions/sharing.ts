import { createRoute, z } from "@hono/zod-openapi";
import { and, asc, eq } from "drizzle-orm";
import { findUserByEmail } from "../../auth/user-store";
import { database, iso } from "../../db/client";
import { sessionAccess, type UserRow, users } from "../../db/schema";
import { ok } from "../../http/envelope";
import { badRequest, conflictOnDuplicate, notFound } from "../../http/errors";
import {
  authenticated,
  createRouter,
  errorResponse,
  gatewayErrors,
  gatewayOk,
  json,
  jsonBody,
} from "../../http/openapi";
import { AccessGrantSchema, SessionIdParamsSchema } from "./schemas";
import { assertOwnerOrAdmin, loadAccessibleSession } from "./store";

/** Sharing a session with other users. Owner or SUPERADMIN only; shared users may use, not share. */
export const sessionSharingRoutes = createRouter();
const tags = ["Sessions"];
const errors = {
  ...gatewayErrors,
  403: errorResponse("Not the owner or a SUPERADMIN"),
  404: errorResponse("Session or user not found"),
};

type GrantedUser = Pick<UserRow, "id" | "name" | "email" | "role">;

/** The access grant as responses show it: the public session id and the grantee, never more of the user. */
const toGrantResource = (publicSessionId: string, user: GrantedUser, createdAt: number) => ({
  sessionId: publicSessionId,
  userId: user.id,
  user: { id: user.id, name: user.name, email: user.email, role: user.role },
  createdAt: iso(createdAt),
});

const grantsOf = async (db: ReturnType<typeof database>, sessionId: string, publicSessionId: string) => {
  const rows = await db
    .select({ grant: sessionAccess, user: users })
    .from(sessionAccess)
    .innerJoin(users, eq(users.id, sessionAccess.userId))
    .where(eq(sessionAccess.sessionId, sessionId))
    .orderBy(asc(sessionAccess.createdAt));
  return rows.map(({ grant, user }) => toGrantResource(publicSessionId, user, grant.createdAt));
};

sessionSharingRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{id}/access",
    tags,
    summary: "Users the session is shared with",
    security: authenticated,
    request: { params: SessionIdParamsSchema },
    responses: { 200: json(gatewayOk(z.array(AccessGrantSchema)), "Grants"), ...errors },
  }),
  async (c) => {
    const db = database(c.env.DB);
    const user = c.get("principal").user;
    const session = await loadAccessibleSession(db, user, c.req.valid("param").id);
    assertOwnerOrAdmin(user, session);
    return c.json(ok("Access list retrieved", await grantsOf(db, session.id, session.sessionId)), 200);
  },
);

sessionSharingRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{id}/access",
    tags,
    summary: "Share the session with a user, by e-mail",
    security: authenticated,
    request: { params: SessionIdParamsSchema, ...jsonBody(z.strictObject({ email: z.email().max(254) })) },
    responses: {
      201: json(gatewayOk(AccessGrantSchema), "Shared"),
      ...errors,
      409: errorResponse("Already shared with this user"),
    },
  }),
  async (c) => {
    const db = database(c.env.DB);
    const caller = c.get("principal").user;
    const session = await loadAccessibleSession(db, caller, c.req.valid("param").id);
    assertOwnerOrAdmin(caller, session);
    const target = await findUserByEmail(db, c.req.valid("json").email);
    if (!target) throw notFound("User not found", "No user has this e-mail");
    if (target.id === session.userId) throw badRequest("The owner already has access");
    if (target.role === "SUPERADMIN") throw badRequest("A SUPERADMIN already has access to every session");
    const createdAt = Date.now();
    await conflictOnDuplicate(
      db.insert(sessionAccess).values({ sessionId: session.id, userId: target.id, createdAt }),
      "The session is already shared with this user",
    );
    return c.json(ok("Access granted", toGrantResource(session.sessionId, target, createdAt)), 201);
  },
);

sessionSharingRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/{id}/access",
    tags,
    summary: "Stop sharing the session with a user",
    security: authenticated,
    request: {
      params: SessionIdParamsSchema,
      ...jsonBody(z.strictObject({ userId: z.string().min(1).max(64) })),
    },
    responses: { 200: json(gatewayOk(z.null()), "Revoked"), ...errors },
  }),
  async (c) => {
    const db = database(c.env.DB);
    const caller = c.get("principal").user;
    const session = await loadAccessibleSession(db, caller, c.req.valid("param").id);
    assertOwnerOrAdmin(caller, session);
    const removed = await db
      .delete(sessionAccess)
      .where(
        and(eq(sessionAccess.sessionId, session.id), eq(sessionAccess.userId, c.req.valid("json").userId)),
      )
      .returning({ userId: sessionAccess.userId });
    if (removed.length === 0)
      throw notFound("Access grant not found", "The session is not shared with this user");
    return c.json(ok("Access revoked", null), 200);
  },
);
