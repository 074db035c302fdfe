import { and, eq, inArray, isNotNull } from "drizzle-orm";
import type { Db } from "../../db/client";
import { companyLines, lineMembers, lineNotices } from "../../db/schema";
import { digestText } from "./digest-content";
import { type LineRecipient, localDate, localMinute, recipientsFor } from "./directory";
import { enqueueNotices, knownOrigin } from "./notices";
import { digestSubjectId } from "./subjects";
import { companyName } from "./triggers";

/**
 * The daily digest (docs/company-line.md "What goes out"; docs/decisions.md): every cron pass queues
 * the digest of each member whose local day has reached 09:00 and who is outside their quiet hours,
 * unless that day's digest is already recorded. The row's subject is the company and the member's
 * local date, and a notice is unique per member, subject and kind, so passes that race (or run again
 * later that day because the cron missed 09:00) record one digest per member, company and day. The
 * sender (sender.ts) then sends it like any notice: rate limit, quiet hours, a line that is down.
 */

/** Minutes after local midnight from which the day's digest is due. */
export const DIGEST_LOCAL_MINUTE = 9 * 60;
/** Subject ids looked up per query (D1 binds at most 100 parameters). */
const LOOKUP_CHUNK = 50;

/** Companies with a line and at least one verified number on it: the only ones a digest can go from. */
async function companiesWithLineMembers(db: Db): Promise<string[]> {
  const rows = await db
    .selectDistinct({ companyId: companyLines.companyId })
    .from(companyLines)
    .innerJoin(
      lineMembers,
      and(eq(lineMembers.companyId, companyLines.companyId), isNotNull(lineMembers.verifiedAt)),
    )
    .all();
  return rows.map((row) => row.companyId);
}

/** The subject ids among `subjectIds` that already have a digest row in the company (sent, queued or settled). */
async function recordedDigests(db: Db, companyId: string, subjectIds: string[]): Promise<Set<string>> {
  const recorded = new Set<string>();
  for (let i = 0; i < subjectIds.length; i += LOOKUP_CHUNK) {
    const rows = await db
      .select({ userId: lineNotices.userId, subjectId: lineNotices.subjectId })
      .from(lineNotices)
      .where(
        and(
          eq(lineNotices.companyId, companyId),
          eq(lineNotices.subjectType, "digest"),
          inArray(lineNotices.subjectId, subjectIds.slice(i, i + LOOKUP_CHUNK)),
        ),
      )
      .all();
    for (const row of rows) recorded.add(`${row.userId} ${row.subjectId}`);
  }
  return recorded;
}

interface DueDigest {
  recipient: LineRecipient;
  date: string;
  subjectId: string;
}

/** Members of the company whose digest of today (their today) is due at `now` and not yet recorded. */
async function dueDigests(db: Db, companyId: string, now: number): Promise<DueDigest[]> {
  const candidates = (await recipientsFor(db, companyId, "digest", {}, now))
    .filter((recipient) => recipient.quietUntil === null)
    .filter((recipient) => localMinute(now, recipient.timeZone) >= DIGEST_LOCAL_MINUTE)
    .map((recipient) => {
      const date = localDate(now, recipient.timeZone);
      return { recipient, date, subjectId: digestSubjectId(companyId, date) };
    });
  if (candidates.length === 0) return [];
  const recorded = await recordedDigests(db, companyId, [...new Set(candidates.map((due) => due.subjectId))]);
  return candidates.filter((due) => !recorded.has(`${due.recipient.userId} ${due.subjectId}`));
}

/**
 * Records one member's digest of the day: queued when there is something to report, else a dropped
 * row ("nothing to report"), so the day is settled and later passes do not build it again.
 */
async function recordDigest(
  db: Db,
  companyId: string,
  company: string,
  origin: string,
  due: DueDigest,
  now: number,
): Promise<number> {
  const reader = { companyId, userId: due.recipient.userId, role: due.recipient.role };
  const text = await digestText(db, reader, company, due.date, origin, now);
  return enqueueNotices(
    db,
    companyId,
    [due.recipient],
    {
      kind: "digest",
      subjectType: "digest",
      subjectId: due.subjectId,
      text: text ?? `${company}: nothing to report on ${due.date}`,
      ...(text === null ? { dropped: "nothing to report" } : {}),
    },
    now,
  );
}

/** One company's due digests; returns how many rows are new. */
async function queueCompanyDigests(db: Db, companyId: string, now: number): Promise<number> {
  const due = await dueDigests(db, companyId, now);
  if (due.length === 0) return 0;
  const [company, origin] = await Promise.all([companyName(db, companyId), knownOrigin(db, companyId)]);
  let recorded = 0;
  for (const digest of due) recorded += await recordDigest(db, companyId, company, origin, digest, now);
  return recorded;
}

/**
 * The cron's part: queues every digest due at `now`; returns how many rows are new. A company whose
 * pass fails is logged and skipped, so neither other companies nor the rest of the cron wait on it.
 */
export async function queueDueDigests(db: Db, now: number): Promise<number> {
  let recorded = 0;
  for (const companyId of await companiesWithLineMembers(db)) {
    try {
      recorded += await queueCompanyDigests(db, companyId, now);
    } catch (error) {
      console.error(
        JSON.stringify({ level: "error", msg: "line digests pass failed", companyId, error: String(error) }),
      );
    }
  }
  return recorded;
}
