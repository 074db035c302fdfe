import { and, eq, isNotNull, isNull, lte, ne, or, sql } from "drizzle-orm";
import { bytesEqual, randomBytes, sha256, toHex } from "../../auth/crypto";
import type { Db } from "../../db/client";
import { LINE_NOTICE_KINDS, type LineMemberRow, type LineNoticeKind, lineMembers } from "../../db/schema";

/**
 * A member's own number on the company's line (issue 28): the code the line sends to verify it, and
 * what they want to hear about. docs/company-line.md "Your number".
 */

export const CODE_TTL_MS = 10 * 60_000;
/** One code per member per minute: the line's owner pays for every message it sends. */
export const RESEND_INTERVAL_MS = 60_000;
/** Wrong tries before a code is void and a new one must be requested. */
export const MAX_CODE_ATTEMPTS = 5;

/** A fresh 6-digit code, uniform over 000000–999999 (rejection sampling: no modulo bias). */
export function newCode(): string {
  const LIMIT = 4_294_000_000; // the largest multiple of 10^6 below 2^32
  for (;;) {
    const [value = 0] = new Uint32Array(randomBytes(4).buffer);
    if (value < LIMIT) return String(value % 1_000_000).padStart(6, "0");
  }
}

/**
 * The stored form of a code: SHA-256 over the member and the code, so one member's digest says
 * nothing about another's. Six digits are few: the expiry and the try limit are what protect them.
 */
async function codeDigest(companyId: string, userId: string, code: string): Promise<Uint8Array> {
  return sha256(`line-code:${companyId}:${userId}:${code}`);
}

export async function codeHashOf(companyId: string, userId: string, code: string): Promise<string> {
  return toHex(await codeDigest(companyId, userId, code));
}

/** Whether `code` is the member's pending code, comparing digests in constant time. */
export async function codeMatches(row: LineMemberRow, code: string): Promise<boolean> {
  if (row.codeHash === null) return false;
  const presented = await codeDigest(row.companyId, row.userId, code);
  return bytesEqual(presented, unhex(row.codeHash));
}

const unhex = (text: string) => Uint8Array.from(text.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));

export async function findLineMember(db: Db, companyId: string, userId: string) {
  return db
    .select()
    .from(lineMembers)
    .where(and(eq(lineMembers.companyId, companyId), eq(lineMembers.userId, userId)))
    .get();
}

/** Another member of the company whose verified number this is, if any. */
export async function verifiedByAnother(db: Db, companyId: string, userId: string, phone: string) {
  const row = await db
    .select({ userId: lineMembers.userId })
    .from(lineMembers)
    .where(
      and(
        eq(lineMembers.companyId, companyId),
        eq(lineMembers.phone, phone),
        ne(lineMembers.userId, userId),
        isNotNull(lineMembers.verifiedAt),
      ),
    )
    .get();
  return row !== undefined;
}

type MemberKey = { companyId: string; userId: string };
const keyOf = (member: MemberKey) =>
  and(eq(lineMembers.companyId, member.companyId), eq(lineMembers.userId, member.userId));

/**
 * Takes the member's one-code-a-minute slot before a code is sent, in one statement, so that two
 * requests at once send one code, not two (of which only the later would work). A member with no row
 * yet gets one holding only the number; `releaseCodeSlot` undoes it when the code could not be sent.
 * Answers when the slot opens again if another request holds it.
 */
export async function takeCodeSlot(
  db: Db,
  member: MemberKey,
  phone: string,
  now: number,
): Promise<{ taken: true } | { taken: false; opensAt: number }> {
  const taken = await db
    .insert(lineMembers)
    .values({ ...member, phone, codeSentAt: now, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({
      target: [lineMembers.companyId, lineMembers.userId],
      set: { codeSentAt: now },
      setWhere: or(isNull(lineMembers.codeSentAt), lte(lineMembers.codeSentAt, now - RESEND_INTERVAL_MS)),
    })
    .returning({ userId: lineMembers.userId });
  if (taken.length === 1) return { taken: true };
  const row = await db
    .select({ sentAt: lineMembers.codeSentAt })
    .from(lineMembers)
    .where(keyOf(member))
    .get();
  return { taken: false, opensAt: (row?.sentAt ?? now) + RESEND_INTERVAL_MS };
}

/** The code taken for at `now` was not sent: the slot goes back as it was, a row made for it goes. */
export async function releaseCodeSlot(
  db: Db,
  member: MemberKey,
  before: LineMemberRow | undefined,
  now: number,
): Promise<void> {
  const ours = and(keyOf(member), eq(lineMembers.codeSentAt, now));
  if (before) {
    await db.update(lineMembers).set({ codeSentAt: before.codeSentAt }).where(ours);
    return;
  }
  await db.delete(lineMembers).where(and(ours, isNull(lineMembers.codeHash), isNull(lineMembers.verifiedAt)));
}

/**
 * Stores a code just sent to `phone`. A new number starts unverified; the same number keeps its
 * verification (asking for a code again does not take the number off the line).
 */
export async function storeSentCode(
  db: Db,
  member: { companyId: string; userId: string },
  phone: string,
  codeHash: string,
  now: number,
): Promise<void> {
  const code = {
    codeHash,
    codeExpiresAt: now + CODE_TTL_MS,
    codeAttempts: 0,
    codeSentAt: now,
    updatedAt: now,
  };
  await db
    .insert(lineMembers)
    .values({ ...member, phone, ...code, createdAt: now })
    .onConflictDoUpdate({
      target: [lineMembers.companyId, lineMembers.userId],
      set: {
        ...code,
        phone,
        verifiedAt: sql`CASE WHEN ${lineMembers.phone} = ${phone} THEN ${lineMembers.verifiedAt} ELSE NULL END`,
      },
    });
}

const ofMember = (row: LineMemberRow) =>
  and(eq(lineMembers.companyId, row.companyId), eq(lineMembers.userId, row.userId));

/** A wrong try: counted; the fifth voids the code. Answers the tries left. */
export async function countWrongTry(db: Db, row: LineMemberRow, now: number): Promise<number> {
  const attempts = row.codeAttempts + 1;
  const voided = attempts >= MAX_CODE_ATTEMPTS;
  await db
    .update(lineMembers)
    .set({
      codeAttempts: sql`${lineMembers.codeAttempts} + 1`,
      ...(voided ? { codeHash: null, codeExpiresAt: null } : {}),
      updatedAt: now,
    })
    .where(ofMember(row));
  return Math.max(0, MAX_CODE_ATTEMPTS - attempts);
}

export async function voidCode(db: Db, row: LineMemberRow, now: number): Promise<void> {
  await db
    .update(lineMembers)
    .set({ codeHash: null, codeExpiresAt: null, updatedAt: now })
    .where(ofMember(row));
}

/** The right code: the number is verified and the code spent. */
export async function markVerified(db: Db, row: LineMemberRow, now: number): Promise<void> {
  await db
    .update(lineMembers)
    .set({ verifiedAt: now, codeHash: null, codeExpiresAt: null, codeAttempts: 0, updatedAt: now })
    .where(and(ofMember(row), eq(lineMembers.phone, row.phone)));
}

export interface Preferences {
  notify?: LineNoticeKind[];
  quietHours?: { start: string; end: string } | null;
  timeZone?: string;
}

/** "22:00" → minutes after midnight. */
export const minuteOf = (clock: string) => Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5));
/** Minutes after midnight → "22:00". */
export const clockOf = (minute: number) =>
  `${String(Math.floor(minute / 60)).padStart(2, "0")}:${String(minute % 60).padStart(2, "0")}`;

export async function savePreferences(db: Db, row: LineMemberRow, change: Preferences, now: number) {
  const quiet =
    change.quietHours === undefined
      ? {}
      : change.quietHours === null
        ? { quietStartMinute: null, quietEndMinute: null }
        : {
            quietStartMinute: minuteOf(change.quietHours.start),
            quietEndMinute: minuteOf(change.quietHours.end),
          };
  // Kept in the schema's order, each once, whatever order the caller sent.
  const notify = change.notify && LINE_NOTICE_KINDS.filter((kind) => change.notify?.includes(kind));
  await db
    .update(lineMembers)
    .set({
      ...(notify ? { notify } : {}),
      ...quiet,
      ...(change.timeZone ? { timeZone: change.timeZone } : {}),
      updatedAt: now,
    })
    .where(ofMember(row));
}

export async function unlinkNumber(db: Db, companyId: string, userId: string): Promise<void> {
  await db
    .delete(lineMembers)
    .where(and(eq(lineMembers.companyId, companyId), eq(lineMembers.userId, userId)));
}

/** Whether Intl knows `zone` as an IANA time zone. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
