import { USER_READ_TTL_MS } from "../../auth/user-key-reads";

/**
 * How long this isolate trusts a membership it read from D1. Memberships are only ever added (company
 * creation, package import); one goes away only with its user, whose deletion revokes the user's
 * credentials first, or its company, which is never deleted. So a remembered "yes" never lets in a
 * caller D1 would refuse today; the bound (the same as for user-key reads) caps the lag of any future
 * removal path, which should also delete its entry here.
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

export function recentlyConfirmedMember(userId: string, companyId: string, now = Date.now()): boolean {
  const key = keyOf(userId, companyId);
  const until = confirmedUntil.get(key);
  if (until === undefined) return false;
  if (until > now) return true;
  confirmedUntil.delete(key);
  return false;
}

export function rememberMember(userId: string, companyId: string, now = Date.now()): void {
  const key = keyOf(userId, companyId);
  confirmedUntil.delete(key);
  if (confirmedUntil.size >= MAX_ENTRIES) {
    const oldest = confirmedUntil.keys().next();
    if (!oldest.done) confirmedUntil.delete(oldest.value);
  }
  confirmedUntil.set(key, now + MEMBERSHIP_TTL_MS);
}
