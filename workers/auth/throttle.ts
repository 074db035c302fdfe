import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { loginThrottle } from "../db/schema";

/**
 * Login attempts are counted before the password is checked, in one atomic statement per key, so a
 * burst of parallel guesses cannot all slip past the check (56 of 100 did when failures were counted
 * after). Every attempt counts, refused or not. Three keys:
 *
 * - the account from one source (an IPv4 address, or an IPv6 /64): 5 free attempts in 15 minutes,
 *   then that source waits, exponentially longer (1 s, 2 s, 4 s … up to 15 min), for that account;
 * - the source, whatever the account: 20 free attempts in 15 minutes (many people share an address);
 * - the account from everywhere (issue 25): 10 free attempts in an hour, then the same exponential
 *   delay, and from the 20th attempt of the hour a 15-minute lockout, whatever the source. The lockout
 *   is recorded for the account and shown to its owner (account-events.ts).
 *
 * Past its free attempts a key admits one check after each block and blocks again; while blocked it
 * refuses without the password being looked at, the right one included.
 */
export interface ThrottlePolicy {
  key: string;
  windowMs: number;
  /** Attempts in a window before the key starts blocking. */
  freeAttempts: number;
  /** From this attempt of a window on, each check locks the key for LOCKOUT_MS. */
  lockoutAfter: number | null;
}

const MINUTE = 60 * 1000;
export const LOCKOUT_MS = 15 * MINUTE;
const MAX_BLOCK_MS = 15 * MINUTE;
/** 2^20 s is past every cap: larger exponents would overflow SQLite's 64-bit shift. */
const MAX_EXPONENT = 20;

export const ACCOUNT_FREE_ATTEMPTS = 10;
export const ACCOUNT_LOCKOUT_AFTER = 20;
export const ACCOUNT_WINDOW_MS = 60 * MINUTE;

export function policiesFor(email: string, source: string): [ThrottlePolicy, ThrottlePolicy, ThrottlePolicy] {
  return [
    { key: `acct-ip:${email}|${source}`, windowMs: 15 * MINUTE, freeAttempts: 5, lockoutAfter: null },
    { key: `ip:${source}`, windowMs: 15 * MINUTE, freeAttempts: 20, lockoutAfter: null },
    {
      key: `acct:${email}`,
      windowMs: ACCOUNT_WINDOW_MS,
      freeAttempts: ACCOUNT_FREE_ATTEMPTS,
      lockoutAfter: ACCOUNT_LOCKOUT_AFTER,
    },
  ];
}

/** The block a check claimed at the `attempt`-th attempt of a window sets (the SQL below mirrors it). */
export function blockDurationMs(attempt: number, policy: ThrottlePolicy): number {
  if (attempt <= policy.freeAttempts) return 0;
  if (policy.lockoutAfter !== null && attempt >= policy.lockoutAfter) return LOCKOUT_MS;
  const exponent = Math.min(attempt - policy.freeAttempts - 1, MAX_EXPONENT);
  return Math.min(1000 * 2 ** exponent, MAX_BLOCK_MS);
}

function blockSql(count: ReturnType<typeof sql>, policy: ThrottlePolicy) {
  const exponent = sql`min(${count} - ${policy.freeAttempts} - 1, ${MAX_EXPONENT})`;
  const exponential = sql`min(1000 << ${exponent}, ${MAX_BLOCK_MS})`;
  return policy.lockoutAfter === null
    ? exponential
    : sql`(CASE WHEN ${count} >= ${policy.lockoutAfter} THEN ${LOCKOUT_MS} ELSE ${exponential} END)`;
}

/**
 * Counts this attempt under a key (the window restarts once it is over) and, in the same statement,
 * decides it: while the key is blocked the attempt is refused and changes nothing else; past the free
 * attempts, the first attempt to arrive after a block claims one check and blocks the key again.
 * Parallel attempts see each other's claims, so a burst gets one check, not 56.
 */
function bump(db: Db, policy: ThrottlePolicy, now: number) {
  const fresh = sql`${loginThrottle.windowStartedAt} < ${now - policy.windowMs}`;
  const count = sql`(CASE WHEN ${fresh} THEN 1 ELSE ${loginThrottle.failures} + 1 END)`;
  const blocked = sql`CASE
        WHEN ${loginThrottle.blockedUntil} > ${now} THEN ${loginThrottle.blockedUntil}
        WHEN ${count} > ${policy.freeAttempts} THEN ${now} + ${blockSql(count, policy)}
        ELSE ${loginThrottle.blockedUntil} END`;
  return db
    .insert(loginThrottle)
    .values({ key: policy.key, failures: 1, windowStartedAt: now, blockedUntil: 0 })
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

export interface LoginAdmission {
  policies: ThrottlePolicy[];
  /** 0 when the password may be checked. */
  retryAfterMs: number;
  /** This attempt locked the account (it is checked; a failure records the lockout). */
  locksAccount: boolean;
  /** The account's attempt count in its window. */
  accountAttempts: number;
}

/**
 * Admits a login attempt, or refuses it with how long to wait. `source` is the throttle's view of the
 * client address (client-address.ts).
 */
export async function admitLogin(
  db: Db,
  email: string,
  source: string,
  now = Date.now(),
): Promise<LoginAdmission> {
  const policies = policiesFor(email, source);
  const results = await db.batch([
    bump(db, policies[0], now),
    bump(db, policies[1], now),
    bump(db, policies[2], now),
  ]);
  const rows = results.map((result) => result[0] ?? { attempts: 1, blockedUntil: 0 });
  let retryAfterMs = 0;
  let locksAccount = false;
  rows.forEach((row, index) => {
    const policy = policies[index];
    if (!policy) return;
    const block = blockDurationMs(row.attempts, policy);
    const claimed = block > 0 && row.blockedUntil === now + block;
    if (row.blockedUntil > now && !claimed) retryAfterMs = Math.max(retryAfterMs, row.blockedUntil - now);
    if (claimed && policy.lockoutAfter !== null && row.attempts >= policy.lockoutAfter) locksAccount = true;
  });
  return { policies, retryAfterMs, locksAccount, accountAttempts: rows[2]?.attempts ?? 1 };
}

/**
 * A successful login clears the account's counters (from this source and everywhere) and takes
 * this attempt back from the source's, so colleagues behind one address are not held back by each
 * other's successful logins.
 */
export async function loginSucceeded(db: Db, admission: LoginAdmission): Promise<void> {
  const [pair, source, account] = admission.policies;
  if (!pair || !source || !account) return;
  await db.batch([
    db.delete(loginThrottle).where(sql`${loginThrottle.key} IN (${pair.key}, ${account.key})`),
    db
      .update(loginThrottle)
      .set({ failures: sql`max(${loginThrottle.failures} - 1, 0)` })
      .where(sql`${loginThrottle.key} = ${source.key}`),
  ]);
}
