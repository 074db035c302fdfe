import type { Db } from "../db/client";
import { newId } from "../db/client";
import { type AgentRow, type HeartbeatRunRow, heartbeatRuns } from "../db/schema";
import type { ActorRef } from "./actor";

export interface WakeRequest {
  /** on_demand | mention | assignment | approval | routine | timer */
  source: string;
  /** issue_comment_mentioned, manual_invoke, … */
  reason: string;
  issueId?: string | null;
  commentId?: string | null;
  requestedBy?: ActorRef;
}

/**
 * Why an agent cannot be woken, or null when it can. A wake consumes budget, so an agent whose
 * monthly budget is spent is not woken (budget 0 means "no limit").
 */
export function wakeRefusal(agent: AgentRow): string | null {
  if (agent.status === "pending_approval") return "agent_pending_approval";
  if (agent.status === "terminated") return "agent_terminated";
  if (agent.status === "paused") return "agent_paused";
  if (agent.budgetMonthlyCents > 0 && agent.spentMonthlyCents >= agent.budgetMonthlyCents)
    return "agent_over_budget";
  return null;
}

/**
 * The heartbeat-run row for one wake, unexecuted so it joins the caller's batch. A refused wake is
 * still recorded (status cancelled, with the reason) so "why did my agent not wake?" has an answer.
 */
export function wakeRun(agent: AgentRow, wake: WakeRequest, now = Date.now()): HeartbeatRunRow {
  const refusal = wakeRefusal(agent);
  return {
    id: newId(),
    companyId: agent.companyId,
    agentId: agent.id,
    status: refusal ? "cancelled" : "queued",
    invocationSource: wake.source,
    wakeReason: wake.reason,
    issueId: wake.issueId ?? null,
    commentId: wake.commentId ?? null,
    requestedByUserId: wake.requestedBy?.type === "board" ? wake.requestedBy.userId : null,
    requestedByAgentId: wake.requestedBy?.type === "agent" ? wake.requestedBy.agentId : null,
    errorReason: refusal,
    createdAt: now,
    startedAt: null,
    finishedAt: refusal ? now : null,
  };
}

export const wakeInsert = (db: Db, run: HeartbeatRunRow) => db.insert(heartbeatRuns).values(run);

export const runResource = (run: HeartbeatRunRow) => ({
  id: run.id,
  companyId: run.companyId,
  agentId: run.agentId,
  status: run.status,
  invocationSource: run.invocationSource,
  wakeReason: run.wakeReason,
  issueId: run.issueId,
  commentId: run.commentId,
  errorReason: run.errorReason,
  createdAt: new Date(run.createdAt).toISOString(),
  startedAt: run.startedAt === null ? null : new Date(run.startedAt).toISOString(),
  finishedAt: run.finishedAt === null ? null : new Date(run.finishedAt).toISOString(),
});
