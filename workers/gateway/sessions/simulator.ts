import { createRoute, z } from "@hono/zod-openapi";
import { sessionObject } from "../../../durable-objects/session/contract";
import { database } from "../../db/client";
import { ok } from "../../http/envelope";
import { notFound } from "../../http/errors";
import {
  authenticated,
  createRouter,
  errorResponse,
  gatewayErrors,
  gatewayOk,
  json,
  jsonBody,
} from "../../http/openapi";
import { unwrap } from "./outcome";
import { SessionIdParamsSchema } from "./schemas";
import { loadAccessibleSession } from "./store";

/**
 * Drives the bridge's simulated WhatsApp network: "scan" the QR, or drop the connection with a
 * disconnect code. Mounted only when SIMULATOR=1 (local demos and tests); 404 otherwise.
 */
export const simulatorRoutes = createRouter();
const tags = ["Simulator (development only)"];

simulatorRoutes.use("/:id/simulate/*", async (c, next) => {
  if (c.env.SIMULATOR !== "1") throw notFound();
  return next();
});

const errors = {
  ...gatewayErrors,
  404: errorResponse("Not enabled, or session not found"),
  503: errorResponse("Session not ready"),
};

simulatorRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{id}/simulate/scan",
    tags,
    summary: "Scan the session's current QR with a simulated phone",
    security: authenticated,
    request: { params: SessionIdParamsSchema },
    responses: { 200: json(gatewayOk(z.unknown()), "Scanned"), ...errors },
  }),
  async (c) => {
    const session = await loadAccessibleSession(
      database(c.env.DB),
      c.get("principal"),
      c.req.valid("param").id,
      "operate",
    );
    const result = unwrap(await sessionObject(c.env, session.id).simulate(session.id, "sim.scan"));
    return c.json(ok("QR scanned in the simulator", result ?? null), 200);
  },
);

simulatorRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{id}/simulate/disconnect",
    tags,
    summary: "Drop the simulated WhatsApp connection with a disconnect code (e.g. 401, 408, 428, 440, 515)",
    security: authenticated,
    request: {
      params: SessionIdParamsSchema,
      ...jsonBody(z.strictObject({ code: z.number().int().min(100).max(999) })),
    },
    responses: { 200: json(gatewayOk(z.unknown()), "Dropped"), ...errors },
  }),
  async (c) => {
    const session = await loadAccessibleSession(
      database(c.env.DB),
      c.get("principal"),
      c.req.valid("param").id,
      "operate",
    );
    const { code } = c.req.valid("json");
    const result = unwrap(
      await sessionObject(c.env, session.id).simulate(session.id, "sim.disconnect", code),
    );
    return c.json(ok(`Simulated disconnect ${code}`, result ?? null), 200);
  },
);

simulatorRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{id}/simulate/world",
    tags,
    summary: "Act in the simulated WhatsApp world: a peer writes, acks, calls, adds the account to a group …",
    description:
      "The body is `{action, …}` as the bridge simulator defines it (bridge/src/simulator/simulator.ts): inbox, " +
      "receive, phone.send, ack, edit, revoke, contact, group.add, group.peer-update, call, state.",
    security: authenticated,
    request: {
      params: SessionIdParamsSchema,
      ...jsonBody(z.object({ action: z.string().min(1).max(64) }).catchall(z.unknown())),
    },
    responses: { 200: json(gatewayOk(z.unknown()), "What the simulator answered"), ...errors },
  }),
  async (c) => {
    const session = await loadAccessibleSession(
      database(c.env.DB),
      c.get("principal"),
      c.req.valid("param").id,
      "operate",
    );
    const args = c.req.valid("json");
    const result = unwrap(await sessionObject(c.env, session.id).simulateWorld(session.id, args));
    return c.json(ok(`Simulator: ${args.action}`, result ?? null), 200);
  },
);
