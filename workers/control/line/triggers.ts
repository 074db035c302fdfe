import { and, eq, isNotNull } from "drizzle-orm";
import type { Db } from "../../db/client";
import {
  type ApprovalRow,
  agents,
  type BudgetIncidentRow,
  companies,
  type HeartbeatRunRow,
  type IssueQuestionRow,
  issueApprovals,
  issueComments,
  issues,
  type MembershipRole,
  projects,
} from "../../db/schema";
import { membershipRole } from "../shared";
import { recipientsFor } from "./directory";
import { DECISION_OPTIONS, enqueueNotices } from "./notices";
import { approvalSubjectId, budgetSubjectId } from "./subjects";

/**
 * What the line tells whom (docs/company-line.md "What goes out"). Each trigger runs after the thing
 * it announces committed, queues one notice per recipient (idempotent) and returns how many are new;
 * the caller then asks the sender to try at once when it has a request at hand (sender.ts).
 * `origin` is the dashboard's address for the links ("" makes them relative).
 */

/** Who may decide an approval: any board user but a viewer (approvals/decisions.ts, viewerGate). */
export const APPROVAL_DECIDERS: MembershipRole[] = ["owner", "member"];
/** A poll's question is at most 256 characters on WhatsApp (the gateway's poll route). */
const POLL_QUESTION_MAX = 256;

export const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
export const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

export async function companyName(db: Db, companyId: string): Promise<string> {
  const row = await db
    .select({ name: companies.name })
    .from(companies)
    .where(eq(companies.id, companyId))
    .get();
  return row?.name ?? "Your company";
}

async function agentName(db: Db, companyId: string, agentId: string | null): Promise<string | null> {
  if (agentId === null) return null;
  const row = await db
    .select({ name: agents.name })
    .from(agents)
    .where(and(eq(agents.id, agentId), eq(agents.companyId, companyId)))
    .get();
  return row?.name ?? null;
}

async function issueOf(db: Db, companyId: string, issueId: string | null) {
  if (issueId === null) return undefined;
  return db
    .select()
    .from(issues)
    .where(and(eq(issues.id, issueId), eq(issues.companyId, companyId)))
    .get();
}

/** The first issue the approval is linked to, for its identifier. */
async function approvalIssueIdentifier(db: Db, approval: ApprovalRow): Promise<string | null> {
  const row = await db
    .select({ identifier: issues.identifier })
    .from(issueApprovals)
    .innerJoin(issues, eq(issues.id, issueApprovals.issueId))
    .where(and(eq(issueApprovals.approvalId, approval.id), eq(issueApprovals.companyId, approval.companyId)))
    .get();
  return row?.identifier ?? null;
}

const stringField = (payload: Record<string, unknown>, field: string): string | null => {
  const value = payload[field];
  return typeof value === "string" && value !== "" ? value : null;
};

/** What the approval asks for, in a few words. */
export function approvalAsk(approval: ApprovalRow): string {
  const payload = approval.payload as Record<string, unknown>;
  switch (approval.type) {
    case "hire_agent":
      return `hire ${stringField(payload, "name") ?? "an agent"}`;
    case "approve_ceo_strategy":
      return "approve the CEO's strategy";
    case "whatsapp_send":
      return `send a WhatsApp message to ${stringField(payload, "recipient") ?? "someone"}`;
    case "budget_override_required":
      return "go over budget";
    default:
      return stringField(payload, "title") ?? "a board decision";
  }
}

/** A pending approval → a poll to each verified member who may decide it. */
export async function queueApprovalNotices(db: Db, approval: ApprovalRow, origin: string, now: number) {
  if (approval.status !== "pending") return 0;
  const recipients = await recipientsFor(
    db,
    approval.companyId,
    "approvals",
    { roles: APPROVAL_DECIDERS },
    now,
  );
  if (recipients.length === 0) return 0;
  const [company, agent, identifier] = await Promise.all([
    companyName(db, approval.companyId),
    agentName(db, approval.companyId, approval.requestedByAgentId),
    approvalIssueIdentifier(db, approval),
  ]);
  const link = `${origin}/companies/${approval.companyId}/approvals`;
  const who = agent ?? "A board member";
  const about = identifier ? ` (${identifier})` : "";
  const revised = approvalSubjectId(approval) !== approval.id;
  const asks = revised ? "asks again, revised, to" : "asks to";
  const head = `${company}: ${who} ${asks} ${approvalAsk(approval)}${about}.`;
  const text = `${clip(oneLine(head), POLL_QUESTION_MAX - link.length - 1)}\n${link}`;
  return enqueueNotices(
    db,
    approval.companyId,
    recipients,
    {
      kind: "approvals",
      subjectType: "approval",
      subjectId: approvalSubjectId(approval),
      text,
      pollOptions: DECISION_OPTIONS,
    },
    now,
  );
}

/**
 * An agent's question → the person it asks: the board user who created the issue (who handed the work
 * over), or the company's owners when a person did not (an agent or a routine created it).
 */
export async function queueQuestionNotices(db: Db, question: IssueQuestionRow, origin: string, now: number) {
  if (question.askedByAgentId === null || question.answeredAt !== null) return 0;
  const issue = await issueOf(db, question.companyId, question.issueId);
  if (!issue) return 0;
  const asked = issue.createdByUserId;
  const direct = asked
    ? await recipientsFor(db, question.companyId, "questions", { userIds: [asked] }, now)
    : [];
  const recipients =
    asked && (await isMember(db, question.companyId, asked))
      ? direct
      : await recipientsFor(db, question.companyId, "questions", { roles: ["owner"] }, now);
  if (recipients.length === 0) return 0;
  const [company, agent] = await Promise.all([
    companyName(db, question.companyId),
    agentName(db, question.companyId, question.askedByAgentId),
  ]);
  const text =
    `${company}: ${agent ?? "An agent"} asks on ${issue.identifier} (${clip(oneLine(issue.title), 80)}):\n` +
    `${clip(question.body.trim(), 600)}\n\n` +
    `Reply to this message (quote it) with your answer. ${origin}/issues/${issue.identifier}`;
  return enqueueNotices(
    db,
    question.companyId,
    recipients,
    { kind: "questions", subjectType: "question", subjectId: question.id, text },
    now,
  );
}

const isMember = async (db: Db, companyId: string, userId: string) =>
  (await membershipRole(db, userId, companyId)) !== null;

/** An agent paused at its budget → the owners. `costEventId`: the event that paused it (one notice per pause). */
export async function queueAgentBudgetNotices(
  db: Db,
  agent: {
    id: string;
    companyId: string;
    name: string;
    spentMonthlyCents: number;
    budgetMonthlyCents: number;
  },
  costEventId: string,
  origin: string,
  now: number,
) {
  const recipients = await recipientsFor(db, agent.companyId, "budget", { roles: ["owner"] }, now);
  if (recipients.length === 0) return 0;
  const company = await companyName(db, agent.companyId);
  const text =
    `${company}: ${agent.name} was paused at its monthly budget ` +
    `(${cents(agent.spentMonthlyCents)} of ${cents(agent.budgetMonthlyCents)}). ` +
    `Raise the budget or resume it on the dashboard: ${origin}/agents/${agent.id}`;
  return enqueueNotices(
    db,
    agent.companyId,
    recipients,
    { kind: "budget", subjectType: "agent", subjectId: budgetSubjectId(agent.id, costEventId), text },
    now,
  );
}

/** The company reached its monthly budget (its runs stop) → the owners, once per month. */
export async function queueCompanyBudgetNotices(db: Db, companyId: string, origin: string, now: number) {
  const recipients = await recipientsFor(db, companyId, "budget", { roles: ["owner"] }, now);
  if (recipients.length === 0) return 0;
  const company = await companyName(db, companyId);
  const month = new Date(now).toISOString().slice(0, 7);
  const text =
    `${company} reached its monthly budget: no agent run starts until it is raised. ` +
    `${origin}/companies/${companyId}/costs`;
  return enqueueNotices(
    db,
    companyId,
    recipients,
    { kind: "budget", subjectType: "company", subjectId: budgetSubjectId(companyId, month), text },
    now,
  );
}

/**
 * A budget incident opened → the owners, once per incident: a warning at the soft threshold (any
 * budget), or the hard stop of a budget beyond the agent's and company's monthly ones (those have
 * their own notices above): its runs stop until it is raised.
 */
export async function queueBudgetIncidentNotices(
  db: Db,
  incident: Pick<
    BudgetIncidentRow,
    "id" | "companyId" | "scopeType" | "scopeId" | "window" | "threshold" | "amountCents" | "spentCents"
  >,
  origin: string,
  now: number,
) {
  const recipients = await recipientsFor(db, incident.companyId, "budget", { roles: ["owner"] }, now);
  if (recipients.length === 0) return 0;
  const company = await companyName(db, incident.companyId);
  const scopeName = await scopeNameOf(db, incident);
  const budget = incident.window === "lifetime" ? "lifetime budget" : "monthly budget";
  const spent = `${cents(incident.spentCents)} of ${cents(incident.amountCents)}`;
  const what =
    incident.threshold === "hard"
      ? `reached its ${budget} (${spent}); its runs stop until it is raised.`
      : `passed 80 % of its ${budget} (${spent}).`;
  const text = `${company}: the ${incident.scopeType} ${scopeName} ${what} ${origin}/companies/${incident.companyId}/costs`;
  return enqueueNotices(
    db,
    incident.companyId,
    recipients,
    { kind: "budget", subjectType: "budget_incident", subjectId: incident.id, text },
    now,
  );
}

/** The name of what a budget covers, for a notice's text. */
async function scopeNameOf(db: Db, scope: Pick<BudgetIncidentRow, "scopeType" | "scopeId" | "companyId">) {
  const table = scope.scopeType === "project" ? projects : scope.scopeType === "agent" ? agents : companies;
  const row = await db.select({ name: table.name }).from(table).where(eq(table.id, scope.scopeId)).get();
  return row?.name ?? scope.scopeId;
}

export const cents = (value: number) => `$${(value / 100).toFixed(2)}`;

/** Who watches an issue: its creator, its assignee and everyone who commented (the Mine inbox's rule). */
async function watchersOf(
  db: Db,
  issue: { id: string; createdByUserId: string | null; assigneeUserId: string | null },
) {
  const commenters = await db
    .selectDistinct({ userId: issueComments.authorUserId })
    .from(issueComments)
    .where(and(eq(issueComments.issueId, issue.id), isNotNull(issueComments.authorUserId)))
    .all();
  const ids = [issue.createdByUserId, issue.assigneeUserId, ...commenters.map((row) => row.userId)];
  return [...new Set(ids.filter((id): id is string => id !== null))];
}

/** A run on an issue that failed or timed out → everyone watching the issue. */
export async function queueFailedRunNotices(db: Db, run: HeartbeatRunRow, origin: string, now: number) {
  if (run.status !== "failed" && run.status !== "timed_out") return 0;
  const issue = await issueOf(db, run.companyId, run.issueId);
  if (!issue) return 0;
  const userIds = await watchersOf(db, issue);
  const recipients = await recipientsFor(db, run.companyId, "failed_runs", { userIds }, now);
  if (recipients.length === 0) return 0;
  const [company, agent] = await Promise.all([
    companyName(db, run.companyId),
    agentName(db, run.companyId, run.agentId),
  ]);
  const how = run.status === "timed_out" ? "timed out" : "failed";
  const why = run.errorReason ? ` (${clip(oneLine(run.errorReason), 120)})` : "";
  const text =
    `${company}: ${agent ?? "An agent"}'s run on ${issue.identifier} ${how}${why}. ` +
    `${origin}/runs/${run.id}`;
  return enqueueNotices(
    db,
    run.companyId,
    recipients,
    { kind: "failed_runs", subjectType: "run", subjectId: run.id, text },
    now,
  );
}
