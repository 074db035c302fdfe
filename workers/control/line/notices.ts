import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import {
  type LineNoticeKind,
  type LineNoticeRow,
  type LineNoticeSubject,
  lineNotices,
  lineOrigins,
  users,
} from "../../db/schema";
import type { LineRecipient } from "./directory";

/**
 * Queuing the line's notices (issue 28, docs/company-line.md "What goes out"): one row per member,
 * subject and kind, so a trigger that runs twice (a retried request, two paths reaching the same
 * approval) queues one notice. Sending is sender.ts.
 */

/** The options of every notice that asks for a decision, exactly as the poll carries them. */
export const DECISION_OPTIONS = ["Approve", "Reject", "Ask for changes"] as const;

/** What one trigger says to each of its recipients. */
export interface NoticeDraft {
  kind: LineNoticeKind;
  subjectType: LineNoticeSubject;
  subjectId: string;
  text: string;
  /** Set when the notice asks for a decision: it goes out as a poll with these options. */
  pollOptions?: readonly string[];
  /** Recorded as dropped for this reason, never sent (a digest with nothing to report settles its day). */
  dropped?: string;
}

/**
 * Queues the draft for each recipient, due now or at the end of their quiet hours. Returns how many
 * rows are new (0 when this trigger already ran).
 */
export function enqueueNotices(
  db: Db,
  companyId: string,
  recipients: LineRecipient[],
  draft: NoticeDraft,
  now: number,
): Promise<number> {
  return enqueueEach(
    db,
    companyId,
    recipients.map((recipient) => ({ recipient, draft })),
    now,
  );
}

/** Each recipient's own draft, in one statement: the texts differ (mentions.ts), the round trip does not. */
export async function enqueueEach(
  db: Db,
  companyId: string,
  notices: Array<{ recipient: LineRecipient; draft: NoticeDraft }>,
  now: number,
): Promise<number> {
  if (notices.length === 0) return 0;
  const rows = notices.map(({ recipient, draft }) => ({
    id: newId(),
    companyId,
    userId: recipient.userId,
    kind: draft.kind,
    subjectType: draft.subjectType,
    subjectId: draft.subjectId,
    phone: recipient.phone,
    text: draft.text,
    pollOptions: draft.pollOptions ? [...draft.pollOptions] : null,
    status: draft.dropped === undefined ? ("queued" as const) : ("dropped" as const),
    error: draft.dropped ?? null,
    notBefore: recipient.quietUntil ?? now,
    createdAt: now,
  }));
  const inserted = await db
    .insert(lineNotices)
    .values(rows)
    .onConflictDoNothing()
    .returning({ id: lineNotices.id });
  return inserted.length;
}

/** Remembers where the dashboard is reached, for notices queued with no request at hand. */
export async function rememberOrigin(db: Db, companyId: string, origin: string, now: number): Promise<void> {
  await db
    .insert(lineOrigins)
    .values({ companyId, origin, updatedAt: now })
    .onConflictDoUpdate({
      target: lineOrigins.companyId,
      set: { origin, updatedAt: now },
      setWhere: sql`${lineOrigins.origin} <> ${origin}`,
    });
}

/** The dashboard's address as last seen, or "" (links are then relative) when none was seen yet. */
export async function knownOrigin(db: Db, companyId: string): Promise<string> {
  const row = await db
    .select({ origin: lineOrigins.origin })
    .from(lineOrigins)
    .where(eq(lineOrigins.companyId, companyId))
    .get();
  return row?.origin ?? "";
}

export type RecentNotice = Pick<
  LineNoticeRow,
  "id" | "kind" | "subjectType" | "subjectId" | "status" | "phone" | "error" | "createdAt" | "sentAt"
> & { userName: string };

/** The company's last notices, newest first (the settings page's "WhatsApp line" panel). */
export function recentNotices(db: Db, companyId: string, limit = 20): Promise<RecentNotice[]> {
  return db
    .select({
      id: lineNotices.id,
      kind: lineNotices.kind,
      subjectType: lineNotices.subjectType,
      subjectId: lineNotices.subjectId,
      status: lineNotices.status,
      phone: lineNotices.phone,
      error: lineNotices.error,
      createdAt: lineNotices.createdAt,
      sentAt: lineNotices.sentAt,
      userName: users.name,
    })
    .from(lineNotices)
    .innerJoin(users, eq(users.id, lineNotices.userId))
    .where(and(eq(lineNotices.companyId, companyId)))
    .orderBy(sql`${lineNotices.createdAt} DESC`, sql`${lineNotices}.rowid DESC`)
    .limit(limit)
    .all();
}
