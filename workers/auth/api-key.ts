import { createRoute } from "@hono/zod-openapi";
import { database } from "../db/client";
import { ok } from "../http/envelope";
import { authenticated, createRouter, gatewayErrors, gatewayOk, json } from "../http/openapi";
import { hasApiKey, regenerateApiKey, revokeApiKey } from "./api-key-store";
import { ApiKeyStatusSchema } from "./schemas";

/** The caller's own API key: shown once at generation, SHA-256 at rest, one per user. */
export const apiKeyRoutes = createRouter();
const tags = ["API key"];

apiKeyRoutes.openapi(
  createRoute({
    method: "get",
    path: "/",
    tags,
    summary: "Whether the caller has an API key (never the key itself)",
    security: authenticated,
    responses: { 200: json(gatewayOk(ApiKeyStatusSchema), "Key status"), 401: gatewayErrors[401] },
  }),
  async (c) => {
    const apiKeySet = await hasApiKey(database(c.env.DB), c.get("principal").user.id);
    return c.json(ok("API key status", { apiKey: null, apiKeySet, hidden: apiKeySet }), 200);
  },
);

apiKeyRoutes.openapi(
  createRoute({
    method: "post",
    path: "/",
    tags,
    summary: "Generate a new API key; the previous one stops working at once",
    description: "The full key is in this response only. Send it as `X-API-Key`.",
    security: authenticated,
    responses: {
      201: json(gatewayOk(ApiKeyStatusSchema), "The new key, shown once"),
      401: gatewayErrors[401],
      403: gatewayErrors[403],
    },
  }),
  async (c) => {
    const { key } = await regenerateApiKey(c.env, database(c.env.DB), c.get("principal").user.id);
    return c.json(
      ok("API key generated; store it now, it is not shown again", {
        apiKey: key,
        apiKeySet: true,
        hidden: false,
      }),
      201,
    );
  },
);

apiKeyRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/",
    tags,
    summary: "Revoke the caller's API key",
    security: authenticated,
    responses: {
      200: json(gatewayOk(ApiKeyStatusSchema), "Revoked (or there was none)"),
      401: gatewayErrors[401],
      403: gatewayErrors[403],
    },
  }),
  async (c) => {
    const revoked = await revokeApiKey(c.env, database(c.env.DB), c.get("principal").user.id);
    return c.json(
      ok(revoked ? "API key revoked" : "No API key was set", {
        apiKey: null,
        apiKeySet: false,
        hidden: false,
      }),
      200,
    );
  },
);
