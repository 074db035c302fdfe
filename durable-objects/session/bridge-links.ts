/** What a SessionDO remembers on each bridge WebSocket (survives hibernation). */
export interface LinkAttachment {
  bridge: string;
  epoch: number;
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

/** The open link of the current lease holder, ignoring `except` (a socket that is closing). */
export function findLiveLink(
  ctx: DurableObjectState,
  leaseBridge: string | null,
  leaseEpoch: number,
  except?: WebSocket,
): WebSocket | null {
  if (!leaseBridge) return null;
  for (const ws of ctx.getWebSockets(leaseBridge)) {
    const link = ws.deserializeAttachment() as LinkAttachment | null;
    if (ws !== except && ws.readyState === WebSocket.OPEN && link?.epoch === leaseEpoch) return ws;
  }
  return null;
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
  for (const ws of ctx.getWebSockets(VIEWER_TAG)) {
    if (!isViewer(ws)) continue;
    try {
      ws.close(code, reason);
    } catch {
      // already closing
    }
  }
}
