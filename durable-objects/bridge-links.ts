/** What a SessionDO remembers on each bridge WebSocket (survives hibernation). */
export interface LinkAttachment {
  bridge: string;
  epoch: number;
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

export function closeAllLinks(ctx: DurableObjectState, code: number, reason: string): void {
  for (const ws of ctx.getWebSockets()) {
    try {
      ws.close(code, reason);
    } catch {
      // already closing
    }
  }
}
