import type { Context, Next } from "hono";
import type { AppEnv } from "../core/env";
import { ApiError, titleOf } from "./errors";

/**
 * A Durable Object's response has immutable headers; the app's middleware (request id, security
 * headers) adds to every response, so upgrades are re-wrapped with a mutable copy.
 */
export async function relayUpgrade(pending: Promise<Response>): Promise<Response> {
  const response = await pending;
  return new Response(response.body, {
    status: response.status,
    headers: new Headers(response.headers),
    webSocket: response.webSocket,
  });
}

/** WebSocket endpoints answer 426 to anything but an upgrade. */
export const requireUpgrade = async (c: Context<AppEnv>, next: Next) => {
  if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
    throw new ApiError(426, titleOf(400), "Expected a WebSocket upgrade");
  }
  return next();
};

/**
 * For sockets a browser opens with the user's cookie: anything but an upgrade is 426, and a
 * cross-site `Origin` is 403 (cross-site WebSocket hijacking). Clients that send no Origin (API keys
 * from scripts) are not browsers and pass.
 */
export function refuseCrossSiteUpgrade(c: Context<AppEnv>): void {
  if (c.req.header("Upgrade")?.toLowerCase() !== "websocket")
    throw new ApiError(426, "Upgrade required", "Open this URL as a WebSocket");
  const origin = c.req.header("Origin");
  if (origin !== undefined && origin !== new URL(c.req.url).origin)
    throw new ApiError(403, titleOf(403), "Cross-site WebSocket refused");
}
