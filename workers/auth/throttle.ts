import { inArray, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { loginThrottle } from "../db/schema";

/**
 * Failed logins are slowed down per account and per client address. Within a 15-minute window
 * the first few failures are free; after that every further failure blocks the key for an
 * exponentially growing time (1 s, 2 s, 4 s … capped at 15 min). A client address gets a larger
 * allowance than an account because many people can share one address.
 */
export const THROTTLE_WINDOW_MS = 15 * 60 * 1000;
const MAX_BLOCK_MS = 15 * 60 * 1000;

export interface ThrottleKey {
  key: string;
  freeFailures: number;
}

export function throttleKeysFor(email: string, clientAddress: string): ThrottleKey[] {
  return [
    { key: `acct:${email}`, freeFailures: 5 },
    { key: `ip:${clientAddress}`, freeFailures: 20 },
  ];
}

/** Milliseconds the caller must wait before trying again, or 0. */
export async function remainingBlockMs(db: Db, keys: ThrottleKey[], now = Date.now()): Promise<number> {
  const rows = await db
    .select({ blockedUntil: loginThrottle.blockedUntil })
    .from(loginThrottle)
    .where(
      inArray(
        loginThrottle.key,
        keys.map((k) => k.key),
      ),
    );
  const until = Math.max(0, ...rows.map((r) => r.blockedUntil));
  return Math.max(0, until - now);
}

export function blockDurationMs(failures: number, freeFailures: number): number {
  if (failures <= freeFailures) return 0;
  return Math.min(1000 * 2 ** (failures - freeFailures - 1), MAX_BLOCK_MS);
}

export async function recordFailure(db: Db, keys: ThrottleKey[], now = Date.now()): Promise<void> {
  const windowStart = now - THROTTLE_WINDOW_MS;
  for (const { key, freeFailures } of keys) {
    // One statement per key: the counter is incremented atomically even under concurrent logins.
    const [row] = await db
      .insert(loginThrottle)
      .values({ key, failures: 1, windowStartedAt: now, blockedUntil: 0 })
      .onConflictDoUpdate({
        target: loginThrottle.key,
        set: {
          failures: sql`CASE WHEN ${loginThrottle.windowStartedAt} < ${windowStart} THEN 1 ELSE ${loginThrottle.failures} + 1 END`,
          windowStartedAt: sql`CASE WHEN ${loginThrottle.windowStartedAt} < ${windowStart} THEN ${now} ELSE ${loginThrottle.windowStartedAt} END`,
        },
      })
      .returning({ failures: loginThrottle.failures });
    const block = blockDurationMs(row?.failures ?? 1, freeFailures);
    if (block > 0) {
      await db
        .update(loginThrottle)
        .set({ blockedUntil: sql`max(${loginThrottle.blockedUntil}, ${now + block})` })
        .where(sql`${loginThrottle.key} = ${key}`);
    }
  }
}

/** A successful login clears the account's counter; the address keeps its history. */
export async function clearAccountFailures(db: Db, email: string): Promise<void> {
  await db.delete(loginThrottle).where(sql`${loginThrottle.key} = ${`acct:${email}`}`);
}
