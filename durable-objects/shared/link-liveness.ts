import { LINK_HEARTBEAT } from "../../bridge/src/protocol/link";
import type { Env } from "../../workers/core/env";

/**
 * Whether a bridge's WebSocket is still alive, as an object that hibernates can tell: bridges say
 * `ping` every LINK_HEARTBEAT.intervalMs and the runtime answers `pong` without waking the object,
 * keeping the time. A socket opened recently, or heard from recently, is live; one silent for
 * `staleAfterMs` is a half-open connection that must not hold a bridge id or its sessions.
 */

/** Answers bridges' heartbeats from the runtime, for this object's sockets. */
export function answerHeartbeats(ctx: DurableObjectState): void {
  ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(LINK_HEARTBEAT.ping, LINK_HEARTBEAT.pong));
}

/** `BRIDGE_LINK_STALE_MS` overrides the default (tests; a deployment with slow networks). */
export function staleAfterMs(env: Env): number {
  const configured = Number(env.BRIDGE_LINK_STALE_MS);
  return Number.isFinite(configured) && configured > 0 ? configured : LINK_HEARTBEAT.staleAfterMs;
}

export function lastHeardAt(ctx: DurableObjectState, ws: WebSocket, openedAt: number): number {
  const pinged = ctx.getWebSocketAutoResponseTimestamp(ws)?.getTime() ?? 0;
  return Math.max(openedAt, pinged);
}

export function isLinkLive(
  ctx: DurableObjectState,
  ws: WebSocket,
  openedAt: number,
  staleMs: number,
  now = Date.now(),
): boolean {
  return ws.readyState === WebSocket.OPEN && now - lastHeardAt(ctx, ws, openedAt) < staleMs;
}

/** Closes a socket that may already be closing or gone. */
export function closeQuietly(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, reason);
  } catch {
    // already closed
  }
}
