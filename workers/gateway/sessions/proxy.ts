import { createRoute, z } from "@hono/zod-openapi";
import { describeProxy, readProxyUrl } from "../../../bridge/src/protocol/proxy";
import { type SessionSnapshot, sessionObject } from "../../../durable-objects/session/contract";
import { proxyOwner, type StoredProxy } from "../../../durable-objects/session/proxy";
import { seal } from "../../auth/secret-box";
import { database } from "../../db/client";
import { ok } from "../../http/envelope";
import { badRequest } from "../../http/errors";
import { authenticated, createRouter, errorResponse, gatewayOk, json, jsonBody } from "../../http/openapi";
import { unwrap } from "./outcome";
import {
  SessionIdParamsSchema,
  SetProxyBodySchema,
  ShownProxySchema,
  sessionErrorResponses,
} from "./schemas";
import { loadAccessibleSession } from "./store";

/**
 * A proxy per session: the account's WhatsApp socket, media uploads and downloads leave through it,
 * so WhatsApp sees each account from an address of its own. The URL (with its credentials) is sealed
 * under SECRETS_MASTER_KEY and bound to the session; responses show `scheme://host:port` only. A
 * running session reconnects through the new proxy at once. Setting it is the owner's: it decides
 * where the account's traffic goes.
 */
export const proxyRoutes = createRouter();
const tags = ["Sessions"];

const ProxyResultSchema = z.object({ proxy: ShownProxySchema, state: z.string() });
const responses = {
  200: json(gatewayOk(ProxyResultSchema), "The proxy as shown, and the session's state"),
  ...sessionErrorResponses,
  503: errorResponse("SECRETS_MASTER_KEY is not configured, or the bridge did not answer the restart"),
};

proxyRoutes.openapi(
  createRoute({
    method: "put",
    path: "/{id}/proxy",
    tags,
    summary: "Route the session's WhatsApp connection and media through a proxy",
    description:
      "A running session restarts through the proxy at once. A proxy that cannot be reached leaves " +
      "the session in `network_error` with a `lastDisconnect` naming it (never a direct connection).",
    security: authenticated,
    request: { params: SessionIdParamsSchema, ...jsonBody(SetProxyBodySchema) },
    responses,
  }),
  async (c) => {
    const db = database(c.env.DB);
    const session = await loadAccessibleSession(db, c.get("principal"), c.req.valid("param").id, "own");
    const read = readProxyUrl(c.req.valid("json").url);
    if ("error" in read) throw badRequest(read.error);
    const stored: StoredProxy = {
      sealed: await seal(c.env.SECRETS_MASTER_KEY, c.req.valid("json").url, proxyOwner(session.id)),
      shown: describeProxy(read.proxy),
    };
    const live = unwrap<SessionSnapshot>(await sessionObject(c.env, session.id).setProxy(session.id, stored));
    return c.json(ok("Proxy set", { proxy: live.proxy, state: live.state }), 200);
  },
);

proxyRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/{id}/proxy",
    tags,
    summary: "Connect the session directly again (a running session restarts)",
    security: authenticated,
    request: { params: SessionIdParamsSchema },
    responses,
  }),
  async (c) => {
    const db = database(c.env.DB);
    const session = await loadAccessibleSession(db, c.get("principal"), c.req.valid("param").id, "own");
    const live = unwrap<SessionSnapshot>(await sessionObject(c.env, session.id).setProxy(session.id, null));
    return c.json(ok("Proxy removed", { proxy: live.proxy, state: live.state }), 200);
  },
);
