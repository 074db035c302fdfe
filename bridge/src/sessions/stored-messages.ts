/**
 * The edge's copy of a message this account sent (`raw`, Baileys' record), for answering a resend
 * request (a retry receipt) after a restart or failover, when the socket's memory of recent sends is
 * gone. Asked over HTTP like media, only by the bridge holding the session's lease.
 */
import type { EdgeMedia } from "../media/media.ts";
import { sentMessagePath } from "../protocol/messaging.ts";
import type { Json } from "../protocol/seam.ts";

const LOOKUP_TIMEOUT_MS = 5_000;

export async function fetchSentMessage(edge: EdgeMedia, id: string): Promise<Json | null> {
  const response = await fetch(`${edge.origin}${sentMessagePath(edge.sessionId, id)}`, {
    headers: { authorization: `Bearer ${edge.token}` },
    signal: AbortSignal.timeout(LOOKUP_TIMEOUT_MS),
  });
  if (!response.ok) {
    await response.arrayBuffer().catch(() => undefined);
    return null;
  }
  const body = (await response.json()) as { raw?: Json };
  return body.raw ?? null;
}
