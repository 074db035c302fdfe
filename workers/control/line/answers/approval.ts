import { and, eq } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { type ApprovalRow, agents, approvals, users } from "../../../db/schema";
import { rowIdOf, supersededApprovalNotice } from "../subjects";
import { type AnswerContext, type AnswerResult, errorOf, whenText } from "./context";
import { APPROVAL_HELP, approvalIntent, type Decision } from "./intent";

/**
 * An answer to an approval notice, applied through the dashboard's own decision routes as the member
 * (approve, reject, request-revision): the same role rules, activity log and wake of the requester.
 */

const ROUTE: Record<Decision, string> = { approve: "approve", reject: "reject", changes: "request-revision" };
const DONE: Record<Decision, string> = {
  approve: "Approved",
  reject: "Rejected",
  changes: "Asked for changes to",
};
const STATUS_WORD: Partial<Record<ApprovalRow["status"], string>> = {
  approved: "approved",
  rejected: "rejected",
  revision_requested: "sent back for changes",
  cancelled: "cancelled",
};

const SUPERSEDED: AnswerResult = {
  outcome: "refused",
  detail: "superseded",
  reply: "That asked about an earlier version, revised since; answer the latest message. Nothing changed.",
};

/** Statuses a decision may be taken from: `changes` only from pending, as the route says. */
const mayTake = (decision: Decision, status: ApprovalRow["status"]) =>
  decision === "changes" ? status === "pending" : status === "pending" || status === "revision_requested";

const findApproval = (db: Db, companyId: string, id: string) =>
  db
    .select()
    .from(approvals)
    .where(and(eq(approvals.id, id), eq(approvals.companyId, companyId)))
    .get();

/** "hire of Ada" for a hire, else the approval's title or its type in words. */
async function describe(db: Db, approval: ApprovalRow): Promise<string> {
  const agentId = approval.type === "hire_agent" ? approval.payload.agentId : undefined;
  if (typeof agentId === "string") {
    const agent = await db
      .select({ name: agents.name })
      .from(agents)
      .where(and(eq(agents.id, agentId), eq(agents.companyId, approval.companyId)))
      .get();
    if (agent) return `hire of ${agent.name}`;
  }
  const title = approval.payload.title;
  return typeof title === "string" && title.trim() !== "" ? title.trim() : approval.type.replace(/_/g, " ");
}

/** "Already approved by Ana at 2026-11-28 05:30 UTC, nothing changed." */
async function alreadyDecided(db: Db, approval: ApprovalRow): Promise<AnswerResult> {
  const word = STATUS_WORD[approval.status] ?? approval.status;
  const decider = approval.decidedByUserId
    ? await db.select({ name: users.name }).from(users).where(eq(users.id, approval.decidedByUserId)).get()
    : undefined;
  const by = decider ? ` by ${decider.name}` : "";
  const at = approval.decidedAt === null ? "" : ` at ${whenText(approval.decidedAt)}`;
  return {
    outcome: "already_decided",
    detail: approval.status,
    reply: `Already ${word}${by}${at}, nothing changed.`,
  };
}

export async function answerApproval(ctx: AnswerContext): Promise<AnswerResult> {
  const approval = await findApproval(ctx.db, ctx.companyId, rowIdOf(ctx.notice.subjectId));
  if (!approval) return { outcome: "ignored", detail: "approval not found", reply: null };
  const intent = approvalIntent(ctx.inbound);
  if (intent.act === "withdrawn") return { outcome: "ignored", detail: "withdrawn", reply: null };
  if (intent.act === "unclear") return { outcome: "not_understood", detail: null, reply: APPROVAL_HELP };
  // A decision is about what was asked: an answer to a version revised since is not applied to the new one.
  if (await supersededApprovalNotice(ctx.db, ctx.notice)) return SUPERSEDED;
  if (!mayTake(intent.act, approval.status)) return alreadyDecided(ctx.db, approval);

  const answer = await ctx.asMember(
    "POST",
    `/api/approvals/${encodeURIComponent(approval.id)}/${ROUTE[intent.act]}`,
    intent.note === null ? {} : { decisionNote: intent.note },
  );
  if (answer.status === 200) {
    const what = await describe(ctx.db, approval);
    const note = intent.note === null ? "" : ` ("${intent.note}")`;
    return {
      outcome: "applied",
      detail: intent.act,
      reply: `${DONE[intent.act]} ${what}${note} — recorded for ${ctx.member.name}.`,
    };
  }
  if (answer.status === 422) {
    // Someone decided between our read and the route's write.
    const current = await findApproval(ctx.db, ctx.companyId, approval.id);
    if (current) return alreadyDecided(ctx.db, current);
  }
  if (answer.status >= 500) throw new Error(`approval ${ROUTE[intent.act]}: ${errorOf(answer)}`);
  const why = errorOf(answer);
  return { outcome: "refused", detail: why, reply: `Not applied, nothing changed: ${why}.` };
}
