import { and, eq, gt, lt, ne, or } from "drizzle-orm";
import type { Db } from "../../db/client";
import {
  type ApprovalRow,
  agents,
  approvals,
  budgetIncidents,
  companies,
  issueQuestions,
  type LineNoticeRow,
  lineMembers,
  lineNotices,
  notifications,
} from "../../db/schema";
import { localDate } from "./directory";

/**
 * Whether what a queued notice is about still wants the member's attention. A notice whose subject
 * was settled meanwhile (an approval decided on the dashboard while the line was down, a question
 * answered, an agent resumed) is dropped before it is sent, never sent late.
 */

/** Budget subjects carry more than the id (docs/company-line.md): the part before `:` is the row. */
export const budgetSubjectId = (rowId: string, occasion: string) => `${rowId}:${occasion}`;
export const rowIdOf = (subjectId: string) => subjectId.split(":")[0] ?? subjectId;

/**
 * A digest is about one company's day as the member lives it: `<companyId>:<YYYY-MM-DD>` in their time
 * zone. The company is part of it because a notice is unique per member, subject and kind across
 * companies, and a member of two companies gets each company's digest.
 */
export const digestSubjectId = (companyId: string, date: string) => `${companyId}:${date}`;
const digestDateOf = (subjectId: string) => subjectId.slice(subjectId.indexOf(":") + 1);

/**
 * An approval is asked once per time it becomes pending: its first notices name the bare id, and a
 * resubmitted one (sent back for changes, revised, pending again) is asked anew as `<id>:<updatedAt>`,
 * so the one-notice-per-subject rule holds per round and a retried trigger still queues once.
 */
export const approvalSubjectId = (approval: ApprovalRow): string =>
  approval.updatedAt > approval.createdAt ? `${approval.id}:${approval.updatedAt}` : approval.id;

/**
 * Whether a later notice about the same approval went to the same member: then this one asks about a
 * version that was revised since, and neither it nor an answer to it stands any more.
 */
export async function supersededApprovalNotice(db: Db, notice: LineNoticeRow): Promise<boolean> {
  const id = rowIdOf(notice.subjectId);
  const later = await db
    .select({ id: lineNotices.id })
    .from(lineNotices)
    .where(
      and(
        eq(lineNotices.companyId, notice.companyId),
        eq(lineNotices.userId, notice.userId),
        eq(lineNotices.subjectType, "approval"),
        // The bare id, or `<id>:<round>` (":" sorts right before ";"), without LIKE's wildcards.
        or(
          eq(lineNotices.subjectId, id),
          and(gt(lineNotices.subjectId, `${id}:`), lt(lineNotices.subjectId, `${id};`)),
        ),
        ne(lineNotices.subjectId, notice.subjectId),
        gt(lineNotices.createdAt, notice.createdAt),
      ),
    )
    .get();
  return later !== undefined;
}

/** Why the notice is no longer worth sending at `now`, or null when it still is. */
export async function settledReason(db: Db, notice: LineNoticeRow, now = Date.now()): Promise<string | null> {
  const companyId = notice.companyId;
  switch (notice.subjectType) {
    case "approval": {
      const row = await db
        .select({ status: approvals.status })
        .from(approvals)
        .where(and(eq(approvals.id, rowIdOf(notice.subjectId)), eq(approvals.companyId, companyId)))
        .get();
      if (!row) return "the approval no longer exists";
      if (row.status !== "pending") return `the approval is already ${row.status.replace("_", " ")}`;
      return (await supersededApprovalNotice(db, notice)) ? "a revised request replaced it" : null;
    }
    case "question": {
      const row = await db
        .select({ answeredAt: issueQuestions.answeredAt })
        .from(issueQuestions)
        .where(and(eq(issueQuestions.id, notice.subjectId), eq(issueQuestions.companyId, companyId)))
        .get();
      if (!row) return "the question no longer exists";
      return row.answeredAt === null ? null : "the question is already answered";
    }
    case "agent": {
      const row = await db
        .select({ status: agents.status, pauseReason: agents.pauseReason })
        .from(agents)
        .where(and(eq(agents.id, rowIdOf(notice.subjectId)), eq(agents.companyId, companyId)))
        .get();
      return row?.status === "paused" && row.pauseReason === "budget"
        ? null
        : "the agent is no longer paused for its budget";
    }
    case "company": {
      const row = await db
        .select({ budget: companies.budgetMonthlyCents, spent: companies.spentMonthlyCents })
        .from(companies)
        .where(eq(companies.id, companyId))
        .get();
      return row && row.budget > 0 && row.spent >= row.budget
        ? null
        : "the company is no longer over its budget";
    }
    case "budget_incident": {
      const row = await db
        .select({ status: budgetIncidents.status })
        .from(budgetIncidents)
        .where(and(eq(budgetIncidents.id, notice.subjectId), eq(budgetIncidents.companyId, companyId)))
        .get();
      return row?.status === "open" ? null : "the budget was raised or removed";
    }
    case "digest":
      return staleDigest(db, notice, now);
    case "notification": {
      // The inbox row goes with its issue (deleted) and is read once its person saw it on the dashboard.
      const row = await db
        .select({ readAt: notifications.readAt })
        .from(notifications)
        .where(and(eq(notifications.id, notice.subjectId), eq(notifications.companyId, companyId)))
        .get();
      if (!row) return "the issue no longer exists";
      return row.readAt === null ? null : "already read in the dashboard's inbox";
    }
    default:
      // A failed run stays a fact.
      return null;
  }
}

/** A digest held past the member's local day (the line was down all day) says nothing true any more. */
async function staleDigest(db: Db, notice: LineNoticeRow, now: number): Promise<string | null> {
  const member = await db
    .select({ timeZone: lineMembers.timeZone })
    .from(lineMembers)
    .where(and(eq(lineMembers.companyId, notice.companyId), eq(lineMembers.userId, notice.userId)))
    .get();
  if (!member) return "the member no longer has a number on the line";
  return localDate(now, member.timeZone) === digestDateOf(notice.subjectId)
    ? null
    : "the digest's day is over in the member's time zone";
}
