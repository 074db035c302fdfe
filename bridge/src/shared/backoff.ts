/** Exponential backoff with full jitter: a fleet of bridges that lost the edge does not return in step. */
export interface Backoff {
  baseMs: number;
  factor: number;
  capMs: number;
}

/** The edge link: quick to come back from a blip, never more than 10 s away. */
export const LINK_BACKOFF: Backoff = { baseMs: 250, factor: 2, capMs: 10_000 };

/** WhatsApp itself: network drops and 503s, where hammering does not help. */
export const WHATSAPP_BACKOFF: Backoff = { baseMs: 1_000, factor: 2, capMs: 60_000 };

/** Delay before retry number `attempt` (0 for the first): uniform in [0, min(cap, base·factor^attempt)]. */
export function backoffDelay(attempt: number, backoff: Backoff, random: () => number = Math.random): number {
  const ceiling = Math.min(backoff.capMs, backoff.baseMs * backoff.factor ** attempt);
  return Math.floor(random() * ceiling);
}
