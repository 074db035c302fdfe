import { and, desc, eq, notInArray, sql } from "drizzle-orm";
import type { ActorRef } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import {
  type AgentRow,
  agents,
  type IssuePriority,
  issues,
  type JsonObject,
  type ROUTINE_RUN_SOURCES,
  type RoutineRow,
  type RoutineRunRow,
  routineRuns,
  routineTriggers,
} from "../../db/schema";
import { conflict } from "../../http/errors";
import type { Statement } from "../issues";
import { numberedIssueStatements } from "../issues";
import { wakeInsert, wakeRun } from "../wakes";
import { routineActivity } from "./store";

/**
 * One run of a routine, whatever fired it (schedule tick, signed webhook, api trigger, manual run):
 * a routine_runs row, and per the concurrency policy an execution issue created or coalesced into,
 * and the assignee woken, all in ONE batch so a run and its effects commit together.
 */

export type RoutineRunSource = (typeof ROUTINE_RUN_SOURCES)[number];

export interface RunRequest {
  source: RoutineRunSource;
  triggerId: string | null;
  /** Schedule fires: the due minute (unique per trigger, the second guard against double fires). */
  scheduledFor: number | null;
  payload: JsonObject | null;
  /** Who asked; null for the system (schedule, webhook). */
  actor: ActorRef | null;
  /** Statements committed first in the same batch (the webhook's replay record). */
  guard?: Statement[];
}

export interface Dispatched {
  run: RoutineRunRow;
  /** A heartbeat run was queued (or coalesced): nudge the runners after the commit. */
  queued: boolean;
}

/** Execution issues in these statuses are finished; any other status is "still active". */
const CLOSED_STATUSES = ["done", "cancelled"] as const;

const openExecutionIssue = (db: Db, routineId: string) =>
  db
    .select({ id: issues.id, identifier: issues.identifier })
    .from(issues)
    .where(and(eq(issues.originRoutineId, routineId), notInArray(issues.status, [...CLOSED_STATUSES])))
    .orderBy(desc(issues.createdAt))
    .limit(1)
    .get();

const assigneeOf = (db: Db, routine: RoutineRow) =>
  db.select().from(agents).where(eq(agents.id, routine.assigneeAgentId)).get();

/** The execution issue's insert statements plus its activity row. */
function executionIssueStatements(
  db: Db,
  routine: RoutineRow,
  request: RunRequest,
  ids: { issueId: string; runId: string },
  now: number,
): Statement[] {
  const priority = routine.priority as IssuePriority;
  const [bump, insert] = numberedIssueStatements(db, {
    id: ids.issueId,
    company: { id: routine.companyId },
    body: {
      title: routine.title,
      description: routine.description,
      priority,
      projectId: routine.projectId,
      assigneeAgentId: routine.assigneeAgentId,
    },
    status: "todo",
    actor: request.actor,
    now,
    originRoutineId: routine.id,
    originExclusive: routine.concurrencyPolicy !== "always_enqueue",
  });
  const activity = routineActivity(
    db,
    {
      companyId: routine.companyId,
      actor: request.actor,
      action: "issue.created",
      entityType: "issue",
      entityId: ids.issueId,
      details: {
        title: routine.title,
        status: "todo",
        priority,
        assigneeAgentId: routine.assigneeAgentId,
        originRoutineId: routine.id,
        routineRunId: ids.runId,
      },
    },
    now,
  );
  return [bump, insert, activity];
}

/**
 * The run's heartbeat-run id as committed: the wake's own row, or, when the wake coalesced into the
 * agent's already queued run for the same issue, that run (wakeInsert keeps the older row).
 */
function linkHeartbeatRun(db: Db, runId: string, wakeId: string, agentId: string, issueId: string) {
  return db
    .update(routineRuns)
    .set({
      heartbeatRunId: sql`(SELECT id FROM heartbeat_runs WHERE agent_id = ${agentId} AND issue_id = ${issueId}
        AND (id = ${wakeId} OR status = 'queued') ORDER BY (id = ${wakeId}) DESC LIMIT 1)`,
    })
    .where(eq(routineRuns.id, runId));
}

interface Decision {
  status: RoutineRunRow["status"];
  issueId: string | null;
  createIssue: boolean;
  reason: string | null;
}

function decide(
  routine: RoutineRow,
  agent: AgentRow | undefined,
  open: { id: string; identifier: string } | undefined,
): Decision {
  if (!agent)
    return { status: "failed", issueId: null, createIssue: false, reason: "assignee_agent_missing" };
  if (open && routine.concurrencyPolicy === "coalesce_if_active")
    return { status: "coalesced", issueId: open.id, createIssue: false, reason: `open:${open.identifier}` };
  if (open && routine.concurrencyPolicy === "skip_if_active")
    return { status: "skipped", issueId: null, createIssue: false, reason: `open:${open.identifier}` };
  return { status: "issue_created", issueId: newId(), createIssue: true, reason: null };
}

const errorText = (error: unknown): string =>
  error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : String(error);

/** A UNIQUE violation on `table` (D1 names the constraint's columns `table.column`). */
export function violates(error: unknown, table: string): boolean {
  const text = errorText(error);
  return text.includes("UNIQUE constraint failed") && text.includes(`${table}.`);
}

/** Another run of the same routine created its one open execution issue first. */
class ExecutionIssueTaken extends Error {}

/**
 * A run of the routine. Under coalesce_if_active and skip_if_active only one execution issue may be
 * open; two runs that both saw none race to create it, the database lets one win
 * (issues_open_routine_execution_uq), and the other decides again against the winner's issue.
 */
export async function dispatchRoutineRun(
  db: Db,
  routine: RoutineRow,
  request: RunRequest,
  now = Date.now(),
): Promise<Dispatched> {
  try {
    return await dispatchOnce(db, routine, request, now);
  } catch (error) {
    if (!(error instanceof ExecutionIssueTaken)) throw error;
    return dispatchOnce(db, routine, request, now);
  }
}

async function dispatchOnce(
  db: Db,
  routine: RoutineRow,
  request: RunRequest,
  now: number,
): Promise<Dispatched> {
  const [agent, open] = await Promise.all([assigneeOf(db, routine), openExecutionIssue(db, routine.id)]);
  const decision = decide(routine, agent, open);
  const run: RoutineRunRow = {
    id: newId(),
    companyId: routine.companyId,
    routineId: routine.id,
    triggerId: request.triggerId,
    source: request.source,
    status: decision.status,
    issueId: decision.issueId,
    heartbeatRunId: null,
    scheduledFor: request.scheduledFor,
    payload: request.payload,
    reason: decision.reason,
    createdAt: now,
  };
  const statements: Statement[] = [...(request.guard ?? [])];
  if (decision.createIssue && decision.issueId)
    statements.push(
      ...executionIssueStatements(db, routine, request, { issueId: decision.issueId, runId: run.id }, now),
    );
  statements.push(db.insert(routineRuns).values(run));
  let queued = false;
  if (agent && decision.issueId) {
    const wake = wakeRun(
      agent,
      {
        source: "routine",
        reason: "routine_run",
        issueId: decision.issueId,
        routineRunId: run.id,
        requestedBy: request.actor ?? undefined,
      },
      now,
    );
    queued = wake.status === "queued";
    run.heartbeatRunId = wake.id;
    statements.push(wakeInsert(db, wake), linkHeartbeatRun(db, run.id, wake.id, agent.id, decision.issueId));
  }
  if (request.triggerId)
    statements.push(
      db.update(routineTriggers).set({ lastFiredAt: now }).where(eq(routineTriggers.id, request.triggerId)),
    );
  statements.push(
    routineActivity(
      db,
      {
        companyId: routine.companyId,
        actor: request.actor,
        action: "routine.run",
        entityType: "routine",
        entityId: routine.id,
        details: {
          routineRunId: run.id,
          source: run.source,
          status: run.status,
          issueId: run.issueId,
          triggerId: run.triggerId,
          reason: run.reason,
        },
      },
      now,
    ),
  );
  await commit(db, statements);
  return { run: await committedRun(db, run), queued };
}

async function commit(db: Db, statements: Statement[]): Promise<void> {
  const [first, ...rest] = statements;
  if (!first) return;
  try {
    await db.batch([first, ...rest]);
  } catch (error) {
    if (violates(error, "issues") && String(errorText(error)).includes("issues.origin_routine_id"))
      throw new ExecutionIssueTaken();
    if (violates(error, "issues"))
      throw conflict("The company's issue counter collided with an existing identifier; retry");
    throw error;
  }
}

/** The run as stored (its heartbeat-run link is resolved inside the batch). */
async function committedRun(db: Db, run: RoutineRunRow): Promise<RoutineRunRow> {
  if (run.heartbeatRunId === null) return run;
  const row = await db.select().from(routineRuns).where(eq(routineRuns.id, run.id)).get();
  return row ?? run;
}
