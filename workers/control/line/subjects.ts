import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { agents, approvals, companies, issueQuestions, type LineNoticeRow } from "../../db/schema";

/**
 * Whether what a queued notice is about still wants the member's attention. A notice whose subject
 * was settled meanwhile (an approval decided on the dashboard while the line was down, a question
 * answered, an agent resumed) is dropped before it is sent, never sent late.
 */

/** Budget subjects carry more than the id (docs/company-line.md): the part before `:` is the row. */
export const budgetSubjectId = (rowId: string, occasion: string) => `${rowId}:${occasion}`;
const rowIdOf = (subjectId: string) => subjectId.split(":")[0] ?? subjectId;

/** Why the notice is no longer worth sending, or null when it still is. */
export async function settledReason(db: Db, notice: LineNoticeRow): Promise<string | null> {
  const companyId = notice.companyId;
  switch (notice.subjectType) {
    case "approval": {
      const row = await db
        .select({ status: approvals.status })
        .from(approvals)
        .where(and(eq(approvals.id, notice.subjectId), eq(approvals.companyId, companyId)))
        .get();
      if (!row) return "the approval no longer exists";
      return row.status === "pending" ? null : `the approval is already ${row.status.replace("_", " ")}`;
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
    default:
      // A failed run stays a fact; a digest is its own moment.
      return null;
  }
}
