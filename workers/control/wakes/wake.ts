import { and, eq, sql } from "drizzle-orm";
import type { ActorRef } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { type AgentRow, companies, type HeartbeatRunRow, heartbeatRuns } from "../../db/schema";
import { budgetHoldReason } from "./holds";

export interface WakeRequest {
  /** on_demand | mention | comment | assignment | approval | routine | timer */
  source: string;
  /** issue_comment_mentioned, manual_invoke, … */
  reason: string;
  issueId?: string | null;
  commentId?: string | null;
  requestedBy?: ActorRef;
  /** Approval decisions: reach the run as PLATFORM_APPROVAL_ID / PLATFORM_APPROVAL_STATUS. */
  approvalId?: string | null;
  approvalStatus?: string | null;
  routineRunId?: string | null;
}

/** A monthly budget and what was spent of it this month (budget 0 means "no limit"). */
export type Budgeted = Pick<AgentRow, "budgetMonthlyCents" | "spentMonthlyCents">;

export const budgetSpent = (row: Budgeted): boolean =>
  row.budgetMonthlyCents > 0 && row.spentMonthlyCents >= row.budgetMonthlyCents;

/**
 * Why an agent cannot be woken or started, or null when it can. A run consumes budget, so an agent
 * whose monthly budget is spent, or whose company's is, does not run. `company`: its budget, where
 * the caller has it (the claim always does: spend may have changed since the wake).
 */
export function wakeRefusal(agent: AgentRow, company?: Budgeted): string | null {
  if (agent.status === "pending_approval") return "agent_pending_approval";
  if (agent.status === "terminated") return "agent_terminated";
  if (agent.status === "paused") return "agent_paused";
  if (budgetSpent(agent)) return "agent_over_budget";
  if (company && budgetSpent(company)) return "company_over_budget";
  return null;
}

/**
 * The heartbeat-run row for one wake, unexecuted so it joins the caller's batch. A refused wake is
 * still recorded (status cancelled, with the reason) so "why did my agent not wake?" has an answer.
 */
/** Wakes someone asked for, as opposed to the agent's own timer or the automation it is part of. */
const ON_DEMAND_SOURCES = new Set(["on_demand", "mention", "comment", "assignment"]);

/** runtimeConfig.heartbeat.wakeOnDemand: false means only timers, approvals and routines wake it. */
const refusesOnDemand = (agent: AgentRow): boolean => heartbeatSettings(agent).wakeOnDemand === false;

/** `runtimeConfig.heartbeat` as stored (free-form JSON): its fields, each only if present. */
export function heartbeatSettings(agent: Pick<AgentRow, "runtimeConfig">): Record<string, unknown> {
  const heartbeat = agent.runtimeConfig.heartbeat;
  return heartbeat !== null && typeof heartbeat === "object" ? (heartbeat as Record<string, unknown>) : {};
}

export function wakeRun(agent: AgentRow, wake: WakeRequest, now = Date.now()): HeartbeatRunRow {
  const refusal =
    wakeRefusal(agent) ??
    (ON_DEMAND_SOURCES.has(wake.source) && refusesOnDemand(agent) ? "agent_wake_on_demand_disabled" : null);
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
    approvalId: wake.approvalId ?? null,
    approvalStatus: wake.approvalStatus ?? null,
    routineRunId: wake.routineRunId ?? null,
    coalescedCount: 0,
    runnerId: null,
    runnerLinkId: null,
    heartbeatAt: null,
    cancelRequestedAt: null,
    exitCode: null,
    logExcerpt: null,
    usage: null,
    costCents: 0,
    sessionId: null,
    sessionResumed: false,
    createdAt: now,
    startedAt: null,
    finishedAt: refusal ? now : null,
  };
}

/**
 * A queued wake that may not start for a budget is stored cancelled with the reason, whichever code
 * path woke it: its company's monthly budget is spent (company_over_budget), or an open hard budget
 * incident holds its company, its issue's project or its agent (holds.ts). Decided in the INSERT
 * itself, from the rows as they are then.
 */
function budgetGate(run: HeartbeatRunRow) {
  const spent = sql`EXISTS (SELECT 1 FROM ${companies} WHERE ${companies.id} = ${run.companyId}
    AND ${companies.budgetMonthlyCents} > 0 AND ${companies.spentMonthlyCents} >= ${companies.budgetMonthlyCents})`;
  const reason = sql`(CASE WHEN ${spent} THEN 'company_over_budget' ELSE ${budgetHoldReason(run, run.createdAt)} END)`;
  return {
    status: sql<HeartbeatRunRow["status"]>`CASE WHEN ${reason} IS NULL THEN 'queued' ELSE 'cancelled' END`,
    errorReason: sql<string | null>`${reason}`,
    finishedAt: sql<number | null>`CASE WHEN ${reason} IS NULL THEN NULL ELSE ${run.createdAt} END`,
  };
}

/**
 * The run's INSERT, unexecuted (for the caller's batch). A queued wake for an agent and issue that
 * already has a queued run coalesces into it (its coalesced_count goes up) instead of queueing a
 * second run for the same work; the unique partial index heartbeat_runs_one_queued_uq is the guard.
 */
export const wakeInsert = (db: Db, run: HeartbeatRunRow) =>
  db
    .insert(heartbeatRuns)
    .values(run.status === "queued" ? { ...run, ...budgetGate(run) } : run)
    .onConflictDoUpdate({
      target: [heartbeatRuns.agentId, heartbeatRuns.issueId],
      targetWhere: sql`status = 'queued'`,
      set: { coalescedCount: sql`${heartbeatRuns.coalescedCount} + 1` },
    });

/**
 * A run as the API shows it, with the name of whoever invoked it (`requestedByName`, see
 * shared/people.ts). `waitingForRunner`: the caller knows whether a connected runner serves
 * the run's company (runners' companiesWithConnectedRunner); only a queued run can be waiting.
 * `queuePosition`: a queued run's place in its company's queue (queuePositions).
 */
export const runResource = (
  run: HeartbeatRunRow,
  runnerServes: boolean,
  requestedByName: string | null,
  queuePosition: number | null = null,
) => ({
  id: run.id,
  companyId: run.companyId,
  agentId: run.agentId,
  status: run.status,
  invocationSource: run.invocationSource,
  requestedByUserId: run.requestedByUserId,
  requestedByAgentId: run.requestedByAgentId,
  requestedByName,
  wakeReason: run.wakeReason,
  issueId: run.issueId,
  commentId: run.commentId,
  errorReason: run.errorReason,
  approvalId: run.approvalId,
  approvalStatus: run.approvalStatus,
  routineRunId: run.routineRunId,
  coalescedCount: run.coalescedCount,
  exitCode: run.exitCode,
  costCents: run.costCents,
  usage: run.usage,
  sessionId: run.sessionId,
  resumed: run.sessionResumed,
  runnerId: run.runnerId,
  waitingForRunner: run.status === "queued" && !runnerServes,
  queuePosition: run.status === "queued" ? queuePosition : null,
  cancelRequestedAt: run.cancelRequestedAt === null ? null : new Date(run.cancelRequestedAt).toISOString(),
  createdAt: new Date(run.createdAt).toISOString(),
  startedAt: run.startedAt === null ? null : new Date(run.startedAt).toISOString(),
  finishedAt: run.finishedAt === null ? null : new Date(run.finishedAt).toISOString(),
});

/** Queued runs of an agent that stops being runnable are cancelled with the reason (unexecuted, for a batch). */
export const cancelQueuedRuns = (db: Db, agentId: string, reason: string, now: number) =>
  db
    .update(heartbeatRuns)
    .set({ status: "cancelled", errorReason: reason, finishedAt: now })
    .where(and(eq(heartbeatRuns.agentId, agentId), eq(heartbeatRuns.status, "queued")));

/** Queued runs of a company that may not start any more, cancelled with the reason (unexecuted). */
export const cancelQueuedCompanyRuns = (db: Db, companyId: string, reason: string, now: number) =>
  db
    .update(heartbeatRuns)
    .set({ status: "cancelled", errorReason: reason, finishedAt: now })
    .where(and(eq(heartbeatRuns.companyId, companyId), eq(heartbeatRuns.status, "queued")));

/**
 * Each queued run's place in its company's queue, from 1 (the next to start when the company, its
 * agent and a runner have room): the company's queued runs created before it, in claim order, plus one.
 * One statement for the whole page.
 */
export async function queuePositions(db: Db, rows: readonly HeartbeatRunRow[]): Promise<Map<string, number>> {
  const queued = rows.filter((row) => row.status === "queued").map((row) => row.id);
  if (queued.length === 0) return new Map();
  // Aliased both ways: drizzle leaves a single table's columns unqualified, which inside the
  // subquery would name the subquery's own rows.
  const found = await db.all<{ id: string; ahead: number }>(sql`
    SELECT run.id AS id,
      (SELECT count(*) FROM ${heartbeatRuns} AS ahead
        WHERE ahead.company_id = run.company_id AND ahead.status = 'queued'
          AND (ahead.created_at, ahead.id) < (run.created_at, run.id)) AS ahead
    FROM ${heartbeatRuns} AS run WHERE run.id IN ${queued}`);
  return new Map(found.map((row) => [row.id, Number(row.ahead) + 1]));
}
