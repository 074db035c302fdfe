import { ALREADY_LINKED, type AuthState, type SessionToBridge } from "../../bridge/src/protocol/link";
import { isLinkLive } from "../shared/link-liveness";
import type { SessionRecord } from "./storage";

/** What a SessionDO remembers on each bridge WebSocket (survives hibernation). */
export interface LinkAttachment {
  bridge: string;
  epoch: number;
  openedAt: number;
}

/** What a SessionDO remembers on each dashboard viewer's WebSocket: viewers only listen. */
export interface ViewerAttachment {
  viewer: true;
}

/** The tag of viewer sockets. A bridge could be named this too: links are told apart by attachment. */
export const VIEWER_TAG = "dashboard-viewer";

export function isViewer(ws: WebSocket): boolean {
  const attachment = ws.deserializeAttachment() as Partial<ViewerAttachment> | null;
  return attachment?.viewer === true;
}

/** Whether `ws` is an open bridge link heard from within `staleMs` (see fleet/liveness.ts). */
export function isLiveBridgeLink(ctx: DurableObjectState, ws: WebSocket, staleMs: number): boolean {
  if (isViewer(ws)) return false;
  const link = ws.deserializeAttachment() as Partial<LinkAttachment> | null;
  return isLinkLive(ctx, ws, link?.openedAt ?? 0, staleMs);
}

/**
 * The live link of the current lease holder, ignoring `except` (a socket that is closing). A link
 * silent past `staleMs` does not count: the session is not connected through a dead socket.
 */
export function findLiveLink(
  ctx: DurableObjectState,
  leaseBridge: string | null,
  leaseEpoch: number,
  staleMs: number,
  except?: WebSocket,
): WebSocket | null {
  if (!leaseBridge) return null;
  for (const ws of ctx.getWebSockets(leaseBridge)) {
    const link = ws.deserializeAttachment() as LinkAttachment | null;
    if (ws !== except && link?.epoch === leaseEpoch && isLiveBridgeLink(ctx, ws, staleMs)) return ws;
  }
  return null;
}

/**
 * A new session socket for `bridge` (the caller checked it holds the lease), or the refusal when that
 * bridge already has a live link: a second process with the same id, or our own redial before the edge
 * saw the old link close, waits (423) instead of cutting the first off. Silent links are replaced.
 */
export function openBridgeLink(
  ctx: DurableObjectState,
  bridge: string,
  epoch: number,
  staleMs: number,
): { refused: Response } | { client: WebSocket; server: WebSocket } {
  if (ctx.getWebSockets(bridge).some((ws) => isLiveBridgeLink(ctx, ws, staleMs))) {
    return {
      refused: new Response("This bridge already has a live link to the session", { status: ALREADY_LINKED }),
    };
  }
  closeAllLinks(ctx, 1000, "replaced: no heartbeat");
  const { 0: client, 1: server } = new WebSocketPair();
  ctx.acceptWebSocket(server, [bridge]);
  server.serializeAttachment({ bridge, epoch, openedAt: Date.now() } satisfies LinkAttachment);
  return { client, server };
}

/** Closes every bridge link; viewers stay (they watch the session, not the lease). */
export function closeAllLinks(ctx: DurableObjectState, code: number, reason: string): void {
  for (const ws of ctx.getWebSockets()) {
    if (isViewer(ws)) continue;
    try {
      ws.close(code, reason);
    } catch {
      // already closing
    }
  }
}

/** Sends `text` to every open viewer socket; one that has gone away is skipped. */
export function broadcastToViewers(ctx: DurableObjectState, text: string): void {
  for (const ws of ctx.getWebSockets(VIEWER_TAG)) {
    if (!isViewer(ws) || ws.readyState !== WebSocket.OPEN) continue;
    try {
      ws.send(text);
    } catch {
      // closing; its close handler cleans up
    }
  }
}

export function closeAllViewers(ctx: DurableObjectState, code: number, reason: string): void {
  // Every listen-only socket, whatever its tag: the pairing page's viewers and the event streams.
  for (const ws of ctx.getWebSockets()) {
    if (!isViewer(ws)) continue;
    try {
      ws.close(code, reason);
    } catch {
      // already closing
    }
  }
}

/**
 * What a bridge hears first on a new link: the lease, whether WhatsApp should run, the auth state to
 * start from, what was stored of this epoch, the version that last connected, and the proxy. A proxy
 * that could not be opened (`undefined`) keeps WhatsApp stopped rather than connect without it.
 */
export function welcomeFrame(
  record: SessionRecord,
  auth: AuthState,
  proxy: string | null | undefined,
): SessionToBridge {
  return {
    type: "welcome",
    epoch: record.leaseEpoch,
    desired: proxy === undefined ? "stopped" : record.desired,
    proxy: proxy ?? null,
    auth,
    lastSeq: record.lastSeq,
    ...(record.waVersion ? { waVersion: record.waVersion.version } : {}),
  };
}
