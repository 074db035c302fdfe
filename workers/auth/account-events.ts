import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { iso, newId } from "../db/client";
import { type AccountEventKind, accountEvents, users } from "../db/schema";

export interface LockoutDetails {
  /** Login attempts on the account within the window when it locked. */
  attempts: number;
  /** Where the attempt that locked it came from (an IPv4 address or an IPv6 /64). */
  source: string;
  lockedUntil: number;
}

/**
 * Records that an account's sign-ins were locked, for the account's owner to see at their next
 * sign-in, and logs it for the operator. The row is written by one INSERT … SELECT over the e-mail,
 * so an unknown e-mail costs the same statement and records nothing: no enumeration by timing.
 */
export async function recordLoginLockout(
  db: Db,
  email: string,
  details: LockoutDetails,
  now: number,
): Promise<void> {
  await db.insert(accountEvents).select(
    db
      .select({
        id: sql<string>`${newId()}`.as("id"),
        userId: users.id,
        kind: sql<AccountEventKind>`'login_locked'`.as("kind"),
        details: sql<string>`${JSON.stringify(details)}`.as("details"),
        createdAt: sql<number>`${now}`.as("created_at"),
        seenAt: sql<null>`NULL`.as("seen_at"),
      })
      .from(users)
      .where(eq(users.email, email)),
  );
  console.warn(
    JSON.stringify({
      level: "warn",
      msg: "login locked",
      email,
      attempts: details.attempts,
      source: details.source,
      lockedUntil: iso(details.lockedUntil),
    }),
  );
}

export interface SecurityNotice {
  id: string;
  kind: AccountEventKind;
  at: string;
  message: string;
  details: Record<string, unknown>;
}

const minutes = (ms: number) => Math.round(ms / 60_000);

function noticeOf(row: typeof accountEvents.$inferSelect): SecurityNotice {
  const details = row.details;
  const attempts = Number(details.attempts ?? 0);
  const lockedFor = minutes(Number(details.lockedUntil ?? row.createdAt) - row.createdAt);
  return {
    id: row.id,
    kind: row.kind,
    at: iso(row.createdAt),
    message:
      `Sign-ins to your account were locked for ${lockedFor} minutes after ${attempts} failed attempts ` +
      `(the last from ${String(details.source ?? "an unknown address")}). If that was not you, change your password.`,
    details,
  };
}

/** The account's security events not shown yet, oldest first; they count as shown from now on. */
export async function takeSecurityNotices(
  db: Db,
  userId: string,
  now = Date.now(),
): Promise<SecurityNotice[]> {
  const rows = await db
    .select()
    .from(accountEvents)
    .where(and(eq(accountEvents.userId, userId), isNull(accountEvents.seenAt)))
    .orderBy(asc(accountEvents.createdAt))
    .limit(20);
  if (rows.length === 0) return [];
  await db
    .update(accountEvents)
    .set({ seenAt: now })
    .where(
      inArray(
        accountEvents.id,
        rows.map((row) => row.id),
      ),
    );
  return rows.map(noticeOf);
}
