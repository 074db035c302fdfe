import { USER_READ_TTL_MS } from "../../auth/user-key-reads";
import { rememberBounded } from "../../core/bounded-map";

/**
 * How long this isolate trusts a membership it read from D1, for reads only (writes ask D1, before or,
 * for a guarded write, inside their commit: so a removed member or a viewer never changes anything). Removing a member or a member leaving deletes
 * the entry here (`forgetMember`), so in the isolate that processed it the removal holds at once; other
 * isolates may still answer the removed user's reads for up to this bound (the same as for user-key
 * reads).
 */
export const MEMBERSHIP_TTL_MS = USER_READ_TTL_MS;
/** Bounds memory per isolate; the oldest entries go first. */
const MAX_ENTRIES = 10_000;

/**
 * `userId companyId` → when this isolate stops trusting its last "member". A board user's read
 * would otherwise pay a D1 query (the slowest step of a cached issue read) that an agent's, whose
 * company travels in its key, does not.
 */
const confirmedUntil = new Map<string, number>();

const keyOf = (userId: string, companyId: string): string => `${userId} ${companyId}`;

/** Whether `until` holds a live entry for the user and company; an expired one is dropped. */
function stillTrusted(until: Map<string, number>, userId: string, companyId: string, now: number): boolean {
  const key = keyOf(userId, companyId);
  const expiresAt = until.get(key);
  if (expiresAt === undefined) return false;
  if (expiresAt > now) return true;
  until.delete(key);
  return false;
}

export const recentlyConfirmedMember = (userId: string, companyId: string, now = Date.now()): boolean =>
  stillTrusted(confirmedUntil, userId, companyId, now);

export function rememberMember(userId: string, companyId: string, now = Date.now()): void {
  rememberBounded(confirmedUntil, keyOf(userId, companyId), now + MEMBERSHIP_TTL_MS, MAX_ENTRIES);
}

/**
 * `userId companyId` → until when the viewer gate may let a guarded write (auth/credential-guard.ts)
 * of the user in the company start without reading their role: D1 answered owner or member within
 * the last MEMBERSHIP_TTL_MS. The write's commit checks that role again (the guard's `memberOf`), so a
 * removal or a lowered role committed anywhere stops it at once; this spares only the read before it.
 */
const writerUntil = new Map<string, number>();

export const recentlyConfirmedWriter = (userId: string, companyId: string, now = Date.now()): boolean =>
  stillTrusted(writerUntil, userId, companyId, now);

export function rememberWriter(userId: string, companyId: string, now = Date.now()): void {
  rememberBounded(writerUntil, keyOf(userId, companyId), now + MEMBERSHIP_TTL_MS, MAX_ENTRIES);
}

/** A membership removed (or its role changed): the next read or write in this isolate asks D1 again. */
export function forgetMember(userId: string, companyId: string): void {
  confirmedUntil.delete(keyOf(userId, companyId));
  writerUntil.delete(keyOf(userId, companyId));
}
