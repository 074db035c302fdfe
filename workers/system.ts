import { createRoute, z } from "@hono/zod-openapi";
import { ok } from "./http/envelope";
import { createRouter, gatewayOk, json } from "./http/openapi";

/** Unauthenticated liveness route; also the baseline every benchmark compares against. */
export const systemRoutes = createRouter();

systemRoutes.openapi(
  createRoute({
    method: "get",
    path: "/health",
    tags: ["System"],
    summary: "Liveness",
    responses: { 200: json(gatewayOk(z.object({ service: z.string() })), "The service is up") },
  }),
  (c) => c.json(ok("ok", { service: "switchboard" }), 200),
);
