import { and, asc, desc, eq, exists, gt, inArray, isNotNull, isNull, lte, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import {
  agents,
  approvals,
  companies,
  companyMemberships,
  heartbeatRuns,
  issueComments,
  issueQuestions,
  issues,
  type MembershipRole,
} from "../../db/schema";
import { APPROVAL_DECIDERS, approvalAsk, clip, oneLine } from "./triggers";

/**
 * What one member's daily digest says (docs/company-line.md "What goes out"): the same things the
 * line's own notices would tell this member, as counts and the first few items with dashboard links,
 * each section by the rule its notice uses (triggers.ts): approvals their role may decide, questions
 * asked of them, failed runs on issues they watch, budget incidents for owners. Scoped to one company.
 */

/** Items listed per section; the count says how many there are in all. */
const TOP = 3;
/** Failed runs count for this long before the digest. */
const FAILED_RUN_WINDOW_MS = 86_400_000;

export interface DigestReader {
  companyId: string;
  userId: string;
  role: MembershipRole;
}

interface Section {
  /** "approval waiting for your decision", singular: the count and plural are added. */
  noun: string;
  plural: string;
  total: number;
  lines: string[];
  /** Where the whole list is, when the items do not link one by one. */
  link?: string;
}

async function approvalsSection(db: Db, reader: DigestReader, origin: string): Promise<Section | null> {
  if (!APPROVAL_DECIDERS.includes(reader.role)) return null;
  const where = and(eq(approvals.companyId, reader.companyId), eq(approvals.status, "pending"));
  const [rows, [total]] = await Promise.all([
    db.select().from(approvals).where(where).orderBy(asc(approvals.createdAt)).limit(TOP).all(),
    db.select({ n: sql<number>`count(*)` }).from(approvals).where(where),
  ]);
  return {
    noun: "approval waiting for your decision",
    plural: "approvals waiting for your decision",
    total: total?.n ?? 0,
    lines: rows.map((approval) => clip(oneLine(approvalAsk(approval)), 100)),
    link: `${origin}/companies/${reader.companyId}/approvals`,
  };
}

/**
 * Unanswered questions of agents asked of this member: the issue's creator while they are a member,
 * the owners when a person did not create it or its creator left (queueQuestionNotices' rule).
 */
async function questionsSection(db: Db, reader: DigestReader, origin: string): Promise<Section> {
  const creatorMembership = and(
    eq(companyMemberships.companyId, issues.companyId),
    eq(companyMemberships.userId, issues.createdByUserId),
  );
  const askedOfReader =
    reader.role === "owner"
      ? or(eq(issues.createdByUserId, reader.userId), isNull(companyMemberships.userId))
      : eq(issues.createdByUserId, reader.userId);
  const rows = await db
    .select({ identifier: issues.identifier, body: issueQuestions.body })
    .from(issueQuestions)
    .innerJoin(issues, and(eq(issues.id, issueQuestions.issueId), eq(issues.companyId, reader.companyId)))
    .leftJoin(companyMemberships, creatorMembership)
    .where(
      and(
        eq(issueQuestions.companyId, reader.companyId),
        isNull(issueQuestions.answeredAt),
        isNotNull(issueQuestions.askedByAgentId),
        askedOfReader,
      ),
    )
    .orderBy(asc(issueQuestions.createdAt))
    .all();
  return {
    noun: "question for you",
    plural: "questions for you",
    total: rows.length,
    lines: rows
      .slice(0, TOP)
      .map((row) => `${row.identifier}: ${clip(oneLine(row.body), 80)} ${origin}/issues/${row.identifier}`),
  };
}

/** Runs that failed or timed out in the last day on issues the member watches (creator, assignee, commenter). */
async function failedRunsSection(
  db: Db,
  reader: DigestReader,
  origin: string,
  now: number,
): Promise<Section> {
  const commented = db
    .select({ one: sql`1` })
    .from(issueComments)
    .where(and(eq(issueComments.issueId, issues.id), eq(issueComments.authorUserId, reader.userId)));
  const watches = or(
    eq(issues.createdByUserId, reader.userId),
    eq(issues.assigneeUserId, reader.userId),
    exists(commented),
  );
  const rows = await db
    .select({
      id: heartbeatRuns.id,
      status: heartbeatRuns.status,
      identifier: issues.identifier,
      agent: agents.name,
    })
    .from(heartbeatRuns)
    .innerJoin(issues, and(eq(issues.id, heartbeatRuns.issueId), eq(issues.companyId, reader.companyId)))
    .innerJoin(agents, eq(agents.id, heartbeatRuns.agentId))
    .where(
      and(
        eq(heartbeatRuns.companyId, reader.companyId),
        inArray(heartbeatRuns.status, ["failed", "timed_out"]),
        gt(heartbeatRuns.finishedAt, now - FAILED_RUN_WINDOW_MS),
        lte(heartbeatRuns.finishedAt, now),
        watches,
      ),
    )
    .orderBy(desc(heartbeatRuns.finishedAt))
    .all();
  return {
    noun: "failed run on issues you watch (last 24 h)",
    plural: "failed runs on issues you watch (last 24 h)",
    total: rows.length,
    lines: rows.slice(0, TOP).map((run) => {
      const how = run.status === "timed_out" ? "timed out" : "failed";
      return `${run.agent}'s run on ${run.identifier} ${how} ${origin}/runs/${run.id}`;
    }),
  };
}

/** Agents paused at their budget and the company over its own: told to owners, as budget notices are. */
async function budgetSection(db: Db, reader: DigestReader, origin: string): Promise<Section | null> {
  if (reader.role !== "owner") return null;
  const [paused, company] = await Promise.all([
    db
      .select({ id: agents.id, name: agents.name })
      .from(agents)
      .where(
        and(
          eq(agents.companyId, reader.companyId),
          eq(agents.status, "paused"),
          eq(agents.pauseReason, "budget"),
        ),
      )
      .orderBy(asc(agents.name))
      .all(),
    db
      .select({ budget: companies.budgetMonthlyCents, spent: companies.spentMonthlyCents })
      .from(companies)
      .where(eq(companies.id, reader.companyId))
      .get(),
  ]);
  const companyOver = company !== undefined && company.budget > 0 && company.spent >= company.budget;
  const lines = [
    ...(companyOver
      ? [`The company reached its monthly budget ${origin}/companies/${reader.companyId}/costs`]
      : []),
    ...paused.map((agent) => `${agent.name} is paused at its budget ${origin}/agents/${agent.id}`),
  ];
  return {
    noun: "budget incident",
    plural: "budget incidents",
    total: lines.length,
    lines: lines.slice(0, TOP),
  };
}

function sectionText(section: Section): string {
  const head = `${section.total} ${section.total === 1 ? section.noun : section.plural}:`;
  const more =
    section.total > section.lines.length ? [`- and ${section.total - section.lines.length} more`] : [];
  const link = section.link ? [section.link] : [];
  return [head, ...section.lines.map((line) => `- ${line}`), ...more, ...link].join("\n");
}

/**
 * The digest's text for this member, or null when there is nothing to report (then none is sent).
 * `date` is the member's local date it is for.
 */
export async function digestText(
  db: Db,
  reader: DigestReader,
  company: string,
  date: string,
  origin: string,
  now: number,
): Promise<string | null> {
  const sections = (
    await Promise.all([
      approvalsSection(db, reader, origin),
      questionsSection(db, reader, origin),
      failedRunsSection(db, reader, origin, now),
      budgetSection(db, reader, origin),
    ])
  ).filter((section): section is Section => section !== null && section.total > 0);
  if (sections.length === 0) return null;
  return [`${company}: your daily digest for ${date}`, ...sections.map(sectionText)].join("\n\n");
}
