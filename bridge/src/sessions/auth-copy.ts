/**
 * The bridge's copy of a session's auth state and the `auth` events that mirror every change of it
 * to the SessionDO (the durable owner). Pure functions: the runner decides when they apply.
 */
import type { AuthState, SessionEvent } from "../protocol/link.ts";
import type { AuthUpdate, Json } from "../protocol/seam.ts";

/** Keys per `auth` event when clearing, so one logout cannot produce a frame the edge refuses. */
const CLEAR_KEYS_PER_EVENT = 1_000;

const isRecord = (value: Json | undefined): value is { [key: string]: Json } =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Whether the creds are a linked device's. Not Baileys' `registered`: only the pairing-code flow sets
 * it, and already when it answers the phone's `primary_hello`, before the phone accepted the code (a
 * mistyped code leaves it true on an unlinked socket). `account`, the phone's signed device identity,
 * comes with `pair-success` alone, by QR or by code.
 */
export function isRegistered(creds: Json): boolean {
  return isRecord(creds) && isRecord(creds.account);
}

/** Applies a Baileys write to `auth` in place and returns the event that carries it to the edge. */
export function applyAuthUpdate(auth: AuthState, update: AuthUpdate): SessionEvent {
  if (update.creds !== undefined) auth.creds = update.creds;
  for (const [key, value] of Object.entries(update.keys ?? {})) {
    if (value === null) delete auth.keys[key];
    else auth.keys[key] = value;
  }
  const event: SessionEvent = { kind: "auth" };
  if (update.creds !== undefined) event.creds = update.creds;
  if (update.keys) event.keys = update.keys;
  return event;
}

/** The events that erase creds and every key id in `keyIds`: creds first, keys in bounded chunks. */
export function authClearingEvents(keyIds: string[]): SessionEvent[] {
  const events: SessionEvent[] = [];
  for (let start = 0; events.length === 0 || start < keyIds.length; start += CLEAR_KEYS_PER_EVENT) {
    const cleared: Record<string, Json> = {};
    for (const key of keyIds.slice(start, start + CLEAR_KEYS_PER_EVENT)) cleared[key] = null;
    events.push(
      events.length === 0 ? { kind: "auth", creds: null, keys: cleared } : { kind: "auth", keys: cleared },
    );
  }
  return events;
}
