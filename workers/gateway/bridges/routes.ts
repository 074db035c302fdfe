import { createRoute, z } from "@hono/zod-openapi";
import { fleetObject } from "../../../durable-objects/fleet/contract";
import { requireRole } from "../../auth/middleware";
import { database } from "../../db/client";
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
import { BridgeParamSchema, BridgeSchema, CreateBridgeBodySchema, CreatedBridgeSchema } from "./schemas";
import {
  activeCredential,
  BOOTSTRAP_BRIDGE_ID,
  createCredential,
  listCredentials,
  revokeCredential,
  toBridgeResource,
} from "./store";

/**
 * Bridge credentials: one per bridge, bound to its id, created and revoked by a SUPERADMIN (others
 * 403). A bridge can only claim the id its credential names, so a leaked credential opens one bridge's
 * sessions, not the fleet's, and revoking it cuts that bridge off at once.
 */
export const bridgeRoutes = createRouter();
bridgeRoutes.use("*", requireRole("SUPERADMIN"));
const tags = ["Bridges"];

bridgeRoutes.openapi(
  createRoute({
    method: "get",
    path: "/",
    tags,
    summary: "List bridge credentials, with whether each bridge is connected",
    security: authenticated,
    responses: { 200: json(gatewayOk(z.array(BridgeSchema)), "Every credential"), ...gatewayErrors },
  }),
  async (c) => {
    const [rows, fleet] = await Promise.all([
      listCredentials(database(c.env.DB)),
      fleetObject(c.env).snapshot(),
    ]);
    return c.json(
      ok(
        "Bridges retrieved",
        rows.map((row) => toBridgeResource(row, fleet)),
      ),
      200,
    );
  },
);

bridgeRoutes.openapi(
  createRoute({
    method: "post",
    path: "/",
    tags,
    summary: "Create a bridge's credential",
    description:
      "Answers the token once. 409 while the id has an active credential (revoke it first); " +
      `"${BOOTSTRAP_BRIDGE_ID}" is reserved for the local bridge, which BRIDGE_TOKEN opens.`,
    security: authenticated,
    request: jsonBody(CreateBridgeBodySchema),
    responses: {
      201: json(gatewayOk(CreatedBridgeSchema), "The credential (shown once)"),
      ...gatewayErrors,
      409: errorResponse("The id already has an active credential"),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("json");
    if (id === BOOTSTRAP_BRIDGE_ID)
      throw badRequest(`"${BOOTSTRAP_BRIDGE_ID}" is the local bridge's id; BRIDGE_TOKEN opens it`);
    const created = await createCredential(database(c.env.DB), id, c.get("principal").user.id);
    if (!created) throw conflict(`Bridge "${id}" already has an active credential; revoke it first`);
    const bridge = toBridgeResource(created.row, await fleetObject(c.env).snapshot());
    return c.json(ok("Bridge credential created", { bridge, token: created.token }), 201);
  },
);

bridgeRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/{id}",
    tags,
    summary: "Revoke a bridge's credential",
    description:
      "The bridge is disconnected at once and its sessions move to other bridges (or wait for one). " +
      "Its next dial answers 401.",
    security: authenticated,
    request: { params: BridgeParamSchema },
    responses: {
      200: json(gatewayOk(BridgeSchema), "Revoked"),
      ...gatewayErrors,
      404: errorResponse("No active credential for that id"),
    },
  }),
  async (c) => {
    const db = database(c.env.DB);
    const { id } = c.req.valid("param");
    const row = await activeCredential(db, id);
    if (!row || !(await revokeCredential(db, id))) throw notFound("Bridge not found");
    const fleet = fleetObject(c.env);
    await fleet.disconnect(id);
    const revoked = toBridgeResource({ ...row, revokedAt: Date.now() }, await fleet.snapshot());
    return c.json(ok("Bridge credential revoked", revoked), 200);
  },
);
