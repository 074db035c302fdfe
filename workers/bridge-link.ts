import { Hono } from "hono";
import { z } from "zod";
import { timingSafeEqual } from "./auth/crypto";
import type { AppEnv } from "./env";
import { ApiError, badRequest, notFound, titleOf, unauthorized } from "./http/errors";

/**
 * Where bridges dial in. Both endpoints are WebSocket upgrades authenticated with
 * `Authorization: Bearer <BRIDGE_TOKEN>` and then handed to a Durable Object, which owns the socket
 * (Hibernation API). A deployment without BRIDGE_TOKEN refuses every bridge (fail closed).
 */
export const bridgeLinkRoutes = new Hono<AppEnv>();

const BridgeIdSchema = z.string().regex(/^[\w.:-]{1,64}$/);
const FleetQuerySchema = z.object({
  bridge: BridgeIdSchema,
  capacity: z.coerce.number().int().min(1).max(100_000),
});
const SessionQuerySchema = z.object({ bridge: BridgeIdSchema });

bridgeLinkRoutes.use("*", async (c, next) => {
  if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
    throw new ApiError(426, titleOf(400), "Expected a WebSocket upgrade");
  }
  const expected = c.env.BRIDGE_TOKEN;
  const presented = c.req.header("Authorization")?.replace(/^Bearer\s+/i, "") ?? "";
  if (!expected || !(await timingSafeEqual(presented, expected))) throw unauthorized("Invalid bridge token");
  return next();
});

/**
 * A Durable Object's response has immutable headers; the app's middleware (request id, security
 * headers) adds to every response, so upgrades are re-wrapped with a mutable copy.
 */
async function relayUpgrade(pending: Promise<Response>): Promise<Response> {
  const response = await pending;
  return new Response(response.body, {
    status: response.status,
    headers: new Headers(response.headers),
    webSocket: response.webSocket,
  });
}

function queryOrReject<T>(schema: z.ZodType<T>, query: Record<string, string>): T {
  const parsed = schema.safeParse(query);
  if (!parsed.success)
    throw badRequest(`Invalid bridge query: ${parsed.error.issues.map((i) => i.path.join(".")).join(", ")}`);
  return parsed.data;
}

bridgeLinkRoutes.get("/fleet", (c) => {
  queryOrReject(FleetQuerySchema, c.req.query());
  return relayUpgrade(c.env.FLEET.getByName("global").fetch(c.req.raw));
});

bridgeLinkRoutes.get("/sessions/:sessionId", async (c) => {
  queryOrReject(SessionQuerySchema, c.req.query());
  const sessionId = c.req.param("sessionId");
  const exists = await c.env.DB.prepare("SELECT 1 FROM sessions WHERE id = ?").bind(sessionId).first();
  if (!exists) throw notFound("Session not found");
  return relayUpgrade(c.env.SESSION.getByName(sessionId).fetch(c.req.raw));
});
