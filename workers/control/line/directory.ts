import { and, eq, inArray, isNotNull, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import {
  companyMemberships,
  type LineMemberRow,
  type LineNoticeKind,
  lineMembers,
  type MembershipRole,
  notifications,
  users,
} from "../../db/schema";

/**
 * Who the company's line may reach, and who an answering number is (issue 28). Only verified numbers
 * of current members count: a removed member's row may linger, but the join with the membership drops
 * it, and the role is always the member's role now, never the one they had when the notice went out.
 */

export interface LineRecipient {
  userId: string;
  name: string;
  phone: string;
  role: MembershipRole;
  timeZone: string;
  /** When the member's quiet hours end, if `now` is inside them; null when they may be messaged now. */
  quietUntil: number | null;
}

export interface RecipientFilter {
  /** Only these users (the person an agent's question asks). */
  userIds?: string[];
  /** Only members with these roles (those whose role may decide an approval). */
  roles?: MembershipRole[];
  /** Only the people these notifications (of this company) went to: asked before reading them. */
  notifiedBy?: string[];
}

/**
 * Verified numbers of the company's current members, with their role now and their name, narrowed by
 * `where`: the one query both questions below ask.
 */
function verifiedMembers(db: Db, companyId: string, ...where: Array<SQL | undefined>) {
  return db
    .select({ member: lineMembers, role: companyMemberships.role, name: users.name })
    .from(lineMembers)
    .innerJoin(
      companyMemberships,
      and(
        eq(companyMemberships.companyId, lineMembers.companyId),
        eq(companyMemberships.userId, lineMembers.userId),
      ),
    )
    .innerJoin(users, eq(users.id, lineMembers.userId))
    .where(and(eq(lineMembers.companyId, companyId), isNotNull(lineMembers.verifiedAt), ...where));
}

/** The people the notifications `ids` went to, as a subquery (no round trip of its own). */
const notifiedPeople = (db: Db, companyId: string, ids: string[]) =>
  db
    .select({ userId: notifications.userId })
    .from(notifications)
    .where(and(eq(notifications.companyId, companyId), inArray(notifications.id, ids)));

/** Verified members who chose `kind`, with whether they are in their quiet hours at `now`. */
export async function recipientsFor(
  db: Db,
  companyId: string,
  kind: LineNoticeKind,
  filter: RecipientFilter,
  now: number,
): Promise<LineRecipient[]> {
  if (filter.userIds?.length === 0 || filter.roles?.length === 0 || filter.notifiedBy?.length === 0)
    return [];
  const rows = await verifiedMembers(
    db,
    companyId,
    filter.userIds ? inArray(lineMembers.userId, filter.userIds) : undefined,
    filter.roles ? inArray(companyMemberships.role, filter.roles) : undefined,
    filter.notifiedBy
      ? inArray(lineMembers.userId, notifiedPeople(db, companyId, filter.notifiedBy))
      : undefined,
  ).all();
  return rows
    .filter((row) => row.member.notify.includes(kind))
    .map((row) => ({
      userId: row.member.userId,
      name: row.name,
      phone: row.member.phone,
      role: row.role,
      timeZone: row.member.timeZone,
      quietUntil: quietUntil(row.member, now),
    }));
}

/** The current member whose verified number this is (digits only), or null: a stranger, unverified, or removed. */
export async function memberByPhone(
  db: Db,
  companyId: string,
  phone: string,
): Promise<{ userId: string; name: string; role: MembershipRole } | null> {
  const row = await verifiedMembers(db, companyId, eq(lineMembers.phone, phone)).get();
  return row ? { userId: row.member.userId, name: row.name, role: row.role } : null;
}

const MINUTES_PER_DAY = 24 * 60;

/** Minutes after local midnight in `timeZone` at `at`. */
export function localMinute(at: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat("en-GB", {
    timeZone,
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).formatToParts(new Date(at));
  const value = (type: string) => Number(parts.find((part) => part.type === type)?.value ?? 0);
  return value("hour") * 60 + value("minute");
}

/** The date in `timeZone` at `at`, as YYYY-MM-DD (the "en-CA" locale writes dates that way). */
export function localDate(at: number, timeZone: string): string {
  return new Intl.DateTimeFormat("en-CA", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).format(new Date(at));
}

/**
 * When the member's quiet hours end if `now` falls in them ([start, end), wrapping past midnight when
 * start > end), else null. To the minute: a notice held for quiet hours goes out at their end.
 */
export function quietUntil(
  member: Pick<LineMemberRow, "quietStartMinute" | "quietEndMinute" | "timeZone">,
  now: number,
): number | null {
  const { quietStartMinute: start, quietEndMinute: end } = member;
  if (start === null || end === null || start === end) return null;
  const minute = localMinute(now, member.timeZone);
  const inside = start < end ? minute >= start && minute < end : minute >= start || minute < end;
  if (!inside) return null;
  const minutesLeft = (end - minute + MINUTES_PER_DAY) % MINUTES_PER_DAY;
  const startOfMinute = now - (now % 60_000);
  return startOfMinute + minutesLeft * 60_000;
}
