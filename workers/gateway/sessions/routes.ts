import { createRoute, z } from "@hono/zod-openapi";
import { eq, sql } from "drizzle-orm";
import type { Context } from "hono";
import { parseCursor } from "../../../durable-objects/messaging/events/log";
import { type SessionSnapshot, sessionObject } from "../../../durable-objects/session/contract";
import type { AppEnv } from "../../core/env";
import { database } from "../../db/client";
import { sessions } from "../../db/schema";
import { ok } from "../../http/envelope";
import { ApiError, badRequest, conflictOnDuplicate } from "../../http/errors";
import {
  authenticated,
  createRouter,
  errorResponse,
  gatewayErrors,
  gatewayOk,
  json,
  jsonBody,
} from "../../http/openapi";
import { pushSessionConfig } from "./call";
import { CursorGoneResponse, EventLogQuerySchema, EventLogSchema, eventLogPage } from "./event-log";
import { unwrap } from "./outcome";
import {
  ActionParamsSchema,
  CreateSessionBodySchema,
  PairBodySchema,
  PatchSettingsBodySchema,
  SessionDetailSchema,
  SessionIdParamsSchema,
  SessionSchema,
  SessionSettingsSchema,
  sessionErrorResponses,
  toSessionResource,
} from "./schemas";
import {
  findBotConfig,
  forgetSession,
  generateSlug,
  insertSession,
  listAccessibleSessions,
  loadAccessibleSession,
  type SessionNeed,
} from "./store";
import { openEventStream, openSessionWatch } from "./watch";
import { webhookSummaries } from "./webhook-summaries";

export const sessionRoutes = createRouter();
const tags = ["Sessions"];
const sessionErrors = sessionErrorResponses;

/** Reading needs any access to the session; anything else an operator's (or the owner's). */
const needFor = (method: string): SessionNeed => (method === "GET" || method === "HEAD" ? "read" : "operate");

const stubFor = (c: Context<AppEnv>, internalId: string) => sessionObject(c.env, internalId);

sessionRoutes.openapi(
  createRoute({
    method: "get",
    path: "/",
    tags,
    summary: "Sessions the caller may access (SUPERADMIN: all; others: own and shared)",
    security: authenticated,
    responses: { 200: json(gatewayOk(z.array(SessionSchema)), "Sessions"), 401: gatewayErrors[401] },
  }),
  async (c) => {
    const db = database(c.env.DB);
    const caller = c.get("principal");
    const rows = await listAccessibleSessions(db, caller);
    const hooks = await webhookSummaries(
      db,
      caller,
      rows.map((r) => r.session),
    );
    return c.json(
      ok(
        "Sessions retrieved",
        rows.map((r) => ({
          ...toSessionResource(r.session, r.botConfig),
          webhooks: hooks.get(r.session.id) ?? [],
        })),
      ),
      200,
    );
  },
);

sessionRoutes.openapi(
  createRoute({
    method: "post",
    path: "/",
    tags,
    summary: "Create a session (stopped until started)",
    security: authenticated,
    request: jsonBody(CreateSessionBodySchema),
    responses: {
      200: json(gatewayOk(SessionSchema), "Created"),
      ...gatewayErrors,
      409: errorResponse("sessionId already in use"),
    },
  }),
  async (c) => {
    const { name, sessionId } = c.req.valid("json");
    const db = database(c.env.DB);
    const created = await conflictOnDuplicate(
      insertSession(db, { name, sessionId: sessionId ?? generateSlug(), userId: c.get("principal").user.id }),
      "This sessionId is already in use",
    );
    return c.json(ok("Session created", toSessionResource(created.session, created.botConfig)), 200);
  },
);

sessionRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{id}",
    tags,
    summary: "One session with its live state",
    security: authenticated,
    request: { params: SessionIdParamsSchema },
    responses: { 200: json(gatewayOk(SessionDetailSchema), "The session"), ...sessionErrors },
  }),
  async (c) => {
    const db = database(c.env.DB);
    const session = await loadAccessibleSession(
      db,
      c.get("principal"),
      c.req.valid("param").id,
      needFor(c.req.method),
    );
    const [live, botConfig, hooks] = await Promise.all([
      stubFor(c, session.id).snapshot(session.id),
      findBotConfig(db, session.id),
      webhookSummaries(db, c.get("principal"), [session]),
    ]);
    const resource = toSessionResource(session, botConfig ?? null);
    return c.json(
      ok("Session retrieved", {
        ...resource,
        _count: live.counts,
        webhooks: hooks.get(session.id) ?? [],
        status: live.status,
        state: live.state,
        me: live.me,
        uptime: live.connectedAt ? Math.floor((Date.now() - live.connectedAt) / 1000) : 0,
        messageCount: live.counts.messages,
        hasInstance: live.hasInstance,
        lastDisconnect: live.lastDisconnect,
        waVersion: live.waVersion,
        proxy: live.proxy,
        limits: live.limits,
      }),
      200,
    );
  },
);

/** A cross-site page must not open a socket with the user's cookie (cross-site WebSocket hijacking). */
function isSameOriginOrNone(c: Context<AppEnv>): boolean {
  const origin = c.req.header("Origin");
  return origin === undefined || origin === new URL(c.req.url).origin;
}

sessionRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{id}/events",
    tags,
    summary: "The session's events from a cursor; as a WebSocket, its live state (the pairing page's)",
    description:
      "A plain GET reads the session's event log: every event its webhooks carry, in order, with the " +
      "same ids (`webhook-id`) and payloads, `limit` at a time after the cursor `after` (0: the oldest " +
      "kept); `next` continues. A cursor older than the log's retention (7 days) answers 410 naming the " +
      "oldest readable cursor. docs/events.md. " +
      'As a WebSocket upgrade: the server sends `{type:"session", state, status, qrImage, me}` at once ' +
      "and after every change: each new QR, connected (with `me`), disconnected. Messages from the client are " +
      "ignored. Authenticated like every route (the cookie from a browser); a cross-site `Origin` is 403. " +
      "The server closes the socket when the caller's access ends: 4401 when their credential changed, " +
      "4403 when their share was revoked.",
    security: authenticated,
    request: { params: SessionIdParamsSchema, query: EventLogQuerySchema },
    responses: {
      200: json(gatewayOk(EventLogSchema), "One page of the session's events"),
      101: { description: "Switching protocols; the session's view follows" },
      400: gatewayErrors[400],
      401: gatewayErrors[401],
      403: errorResponse("Cross-site Origin"),
      404: sessionErrors[404],
      410: CursorGoneResponse,
    },
  }),
  async (c) => {
    if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
      const db = database(c.env.DB);
      const session = await loadAccessibleSession(db, c.get("principal"), c.req.valid("param").id, "read");
      return c.json(await eventLogPage(c, session, c.req.valid("query")), 200);
    }
    if (!isSameOriginOrNone(c)) throw new ApiError(403, "Forbidden", "Cross-site WebSocket refused");
    const db = database(c.env.DB);
    const session = await loadAccessibleSession(
      db,
      c.get("principal"),
      c.req.valid("param").id,
      needFor(c.req.method),
    );
    return openSessionWatch(c, session);
  },
);

sessionRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{id}/events/stream",
    tags,
    summary: "The session's events live over a WebSocket: replayed from a cursor, then followed",
    description:
      "Upgrade to a WebSocket. Every event after `after` (0: the oldest kept) is sent at once, one JSON " +
      "message each (`{id, cursor, event, sessionId, timestamp, data}`, as GET …/events pages them), then " +
      "each new one as it happens: exactly once, in order. Reconnect with the last `cursor` you saw. A " +
      "cursor older than the log's retention is 410 with X-Oldest-Cursor. The socket closes when the " +
      "caller's access ends (4401, 4403). docs/events.md.",
    security: authenticated,
    request: { params: SessionIdParamsSchema, query: EventLogQuerySchema.pick({ after: true }) },
    responses: {
      101: { description: "Switching protocols; the events follow" },
      400: gatewayErrors[400],
      401: gatewayErrors[401],
      403: errorResponse("Cross-site Origin"),
      404: sessionErrors[404],
      410: CursorGoneResponse,
      426: errorResponse("Not a WebSocket upgrade"),
    },
  }),
  async (c) => {
    if (c.req.header("Upgrade")?.toLowerCase() !== "websocket")
      throw new ApiError(426, "Upgrade required", "Open this URL as a WebSocket");
    if (!isSameOriginOrNone(c)) throw new ApiError(403, "Forbidden", "Cross-site WebSocket refused");
    const after = c.req.valid("query").after ?? "0";
    if (parseCursor(after) === null) throw badRequest("after: not a cursor of this log");
    const db = database(c.env.DB);
    const session = await loadAccessibleSession(db, c.get("principal"), c.req.valid("param").id, "read");
    return openEventStream(c, session, after);
  },
);

sessionRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{id}/settings",
    tags,
    summary: "Session settings",
    security: authenticated,
    request: { params: SessionIdParamsSchema },
    responses: {
      200: json(gatewayOk(z.object({ config: SessionSettingsSchema })), "Settings"),
      ...sessionErrors,
    },
  }),
  async (c) => {
    const db = database(c.env.DB);
    const session = await loadAccessibleSession(
      db,
      c.get("principal"),
      c.req.valid("param").id,
      needFor(c.req.method),
    );
    // Read again: the looked-up row may come from the short-lived session cache.
    const fresh = await db.query.sessions.findFirst({
      where: eq(sessions.id, session.id),
      columns: { config: true },
    });
    return c.json(ok("Session settings", { config: JSON.parse(fresh?.config ?? session.config) }), 200);
  },
);

sessionRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/{id}/settings",
    tags,
    summary: "Merge settings (readReceipts, rejectCalls, antiDelete, alwaysOnline)",
    security: authenticated,
    request: { params: SessionIdParamsSchema, ...jsonBody(PatchSettingsBodySchema) },
    responses: { 200: json(gatewayOk(SessionSchema), "The session with merged settings"), ...sessionErrors },
  }),
  async (c) => {
    const db = database(c.env.DB);
    const session = await loadAccessibleSession(
      db,
      c.get("principal"),
      c.req.valid("param").id,
      needFor(c.req.method),
    );
    const { config } = c.req.valid("json");
    // json_patch merges in one statement, so concurrent PATCHes of different keys both survive.
    const [updated] = await db
      .update(sessions)
      .set({ config: sqlJsonMerge(config), updatedAt: Date.now() })
      .where(eq(sessions.id, session.id))
      .returning();
    if (!updated) throw new ApiError(404, "Session not found");
    forgetSession(session);
    const [botConfig] = await Promise.all([
      findBotConfig(db, session.id),
      pushSessionConfig(c.env, session.id),
    ]);
    const resource = toSessionResource(updated, botConfig ?? null);
    return c.json(ok("Settings updated", { ...resource, config: JSON.parse(updated.config) }), 200);
  },
);

sessionRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/{id}/settings",
    tags,
    summary: "Delete the session for good: logs out and erases all of its data",
    security: authenticated,
    request: { params: SessionIdParamsSchema },
    responses: { 200: json(gatewayOk(z.null()), "Deleted"), ...sessionErrors },
  }),
  async (c) => {
    const db = database(c.env.DB);
    const session = await loadAccessibleSession(db, c.get("principal"), c.req.valid("param").id, "own");
    await stubFor(c, session.id).destroy(session.id);
    await db.delete(sessions).where(eq(sessions.id, session.id));
    forgetSession(session);
    return c.json(ok("Session deleted successfully", null), 200);
  },
);

const actionMessages = {
  start: "Session starting",
  stop: "Session stopped",
  restart: "Session restarting",
  logout: "Session logged out",
} as const;

sessionRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{id}/{action}",
    tags,
    summary: "start | stop | restart | logout | pair",
    description:
      "`start` asks the fleet for a bridge (the session waits in `starting` if none is online). " +
      "`pair` takes `{phoneNumber}` and returns an 8-character pairing code (needs a running session showing a QR).",
    security: authenticated,
    request: {
      params: ActionParamsSchema,
      body: { content: { "application/json": { schema: PairBodySchema.partial() } }, required: false },
    },
    responses: {
      200: json(gatewayOk(z.unknown()), "Done; data is the session's live state, or {pairingCode} for pair"),
      ...sessionErrors,
      503: errorResponse("Session not ready: no bridge holds the session"),
    },
  }),
  async (c) => {
    const { id, action } = c.req.valid("param");
    const db = database(c.env.DB);
    // Logging out unlinks the owner's phone: theirs to do. Starting, stopping, pairing: an operator's.
    const need = action === "logout" ? "own" : "operate";
    const session = await loadAccessibleSession(db, c.get("principal"), id, need);
    const stub = stubFor(c, session.id);
    if (action === "pair") {
      const parsed = PairBodySchema.safeParse(c.req.valid("json"));
      if (!parsed.success) throw badRequest("phoneNumber: digits with country code are required");
      return c.json(
        ok("Pairing code generated", unwrap(await stub.pair(session.id, parsed.data.phoneNumber))),
        200,
      );
    }
    const outcome = await stub[action](session.id);
    return c.json(ok(actionMessages[action], unwrap<SessionSnapshot>(outcome)), 200);
  },
);

/** A SQL expression merging `patch` into the stored JSON config (bound as a parameter). */
function sqlJsonMerge(patch: Record<string, boolean | number | undefined>) {
  const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  return sql`json_patch(${sessions.config}, ${JSON.stringify(defined)})`;
}
