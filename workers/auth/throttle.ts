import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { loginThrottle } from "../db/schema";

/**
 * Login attempts are counted before the password is checked, in one atomic statement per key, so a
 * burst of parallel guesses cannot all slip past the check (56 of 100 did when failures were counted
 * after). Three keys, each over a 15-minute window:
 *
 * - the account from one address: a few free attempts, then that address waits, exponentially longer
 *   (up to 15 min) for that account only, so a burst from one address never locks anyone else out;
 * - the address, whatever the account: a larger allowance (many people share an address);
 * - the account from everywhere: never refuses, only slows each attempt down (up to 5 s), so a
 *   distributed guesser gets few guesses per second and the owner still gets in.
 */
export const THROTTLE_WINDOW_MS = 15 * 60 * 1000;
const MAX_BLOCK_MS = 15 * 60 * 1000;
const MAX_ACCOUNT_DELAY_MS = 5_000;

interface ThrottleKey {
  key: string;
  /** Attempts in a window before the key refuses (or, for the account, slows). */
  freeAttempts: number;
  /** The account-wide key slows attempts down instead of refusing them. */
  slowsOnly: boolean;
}

export interface LoginAdmission {
  keys: ThrottleKey[];
  /** The attempt's number in each key's window, in `keys` order. */
  attempts: number[];
  /** 0 when the attempt may go ahead. */
  retryAfterMs: number;
  /** How long to hold the attempt before checking the password (the account-wide slowdown). */
  delayMs: number;
}

function keysFor(email: string, address: string): ThrottleKey[] {
  return [
    { key: `acct-ip:${email}|${address}`, freeAttempts: 5, slowsOnly: false },
    { key: `ip:${address}`, freeAttempts: 20, slowsOnly: false },
    { key: `acct:${email}`, freeAttempts: 50, slowsOnly: true },
  ];
}

/** The block after the `attempt`-th attempt of a key: 1 s, 2 s, 4 s … once past the free ones. */
export function blockDurationMs(attempt: number, freeAttempts: number): number {
  if (attempt <= freeAttempts) return 0;
  return Math.min(1000 * 2 ** (attempt - freeAttempts - 1), MAX_BLOCK_MS);
}

const accountDelayMs = (attempt: number, freeAttempts: number) =>
  attempt <= freeAttempts ? 0 : Math.min((attempt - freeAttempts) * 100, MAX_ACCOUNT_DELAY_MS);

/**
 * Counts this attempt under a key (the window restarts after 15 minutes) and, in the same
 * statement, decides it: while the key is blocked the attempt is refused and changes nothing else;
 * past the free attempts, the first attempt to arrive after a block claims one check and blocks the
 * key again, longer. Parallel attempts see each other's claims, so a burst gets one check, not 56.
 */
function bump(db: Db, key: ThrottleKey, now: number) {
  const windowStart = now - THROTTLE_WINDOW_MS;
  const fresh = sql`${loginThrottle.windowStartedAt} < ${windowStart}`;
  const count = sql`(CASE WHEN ${fresh} THEN 1 ELSE ${loginThrottle.failures} + 1 END)`;
  const block = sql`min(1000 << (${count} - ${key.freeAttempts} - 1), ${MAX_BLOCK_MS})`;
  const blocked = key.slowsOnly
    ? sql`0`
    : sql`CASE
        WHEN ${loginThrottle.blockedUntil} > ${now} THEN ${loginThrottle.blockedUntil}
        WHEN ${count} > ${key.freeAttempts} THEN ${now} + ${block}
        ELSE ${loginThrottle.blockedUntil} END`;
  return db
    .insert(loginThrottle)
    .values({ key: key.key, failures: 1, windowStartedAt: now, blockedUntil: 0 })
    .onConflictDoUpdate({
      target: loginThrottle.key,
      set: {
        failures: count,
        windowStartedAt: sql`CASE WHEN ${fresh} THEN ${now} ELSE ${loginThrottle.windowStartedAt} END`,
        blockedUntil: blocked,
      },
    })
    .returning({ attempts: loginThrottle.failures, blockedUntil: loginThrottle.blockedUntil });
}

/**
 * Admits a login attempt, or refuses it with how long to wait. An admitted attempt may still have to
 * wait `delayMs` (the account-wide slowdown) before its password is checked.
 */
export async function admitLogin(
  db: Db,
  email: string,
  address: string,
  now = Date.now(),
): Promise<LoginAdmission> {
  const keys = keysFor(email, address);
  const [pair, ip, account] = keys as [ThrottleKey, ThrottleKey, ThrottleKey];
  const results = await db.batch([bump(db, pair, now), bump(db, ip, now), bump(db, account, now)]);
  const rows = results.map((result) => result[0] ?? { attempts: 1, blockedUntil: 0 });
  let retryAfterMs = 0;
  let delayMs = 0;
  rows.forEach((row, index) => {
    const key = keys[index];
    if (!key) return;
    if (key.slowsOnly) delayMs = Math.max(delayMs, accountDelayMs(row.attempts, key.freeAttempts));
    else if (
      row.blockedUntil > now &&
      row.blockedUntil !== now + blockDurationMs(row.attempts, key.freeAttempts)
    )
      retryAfterMs = Math.max(retryAfterMs, row.blockedUntil - now);
  });
  return { keys, attempts: rows.map((row) => row.attempts), retryAfterMs, delayMs };
}

/**
 * A successful login clears the account's counters (from this address and everywhere) and takes
 * this attempt back from the address's, so colleagues behind one address are not held back by each
 * other's successful logins.
 */
export async function loginSucceeded(db: Db, admission: LoginAdmission): Promise<void> {
  const [pair, address, account] = admission.keys;
  if (!pair || !address || !account) return;
  await db.batch([
    db.delete(loginThrottle).where(sql`${loginThrottle.key} IN (${pair.key}, ${account.key})`),
    db
      .update(loginThrottle)
      .set({ failures: sql`max(${loginThrottle.failures} - 1, 0)` })
      .where(sql`${loginThrottle.key} = ${address.key}`),
  ]);
}
