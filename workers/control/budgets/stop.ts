import { and, eq, isNull, ne, type SQL } from "drizzle-orm";
import type { ActorRef } from "../../core/actor";
import type { Env } from "../../core/env";
import type { Db } from "../../db/client";
import { type CostEventRow, heartbeatRuns } from "../../db/schema";
import { activityInsert } from "../shared";
import { type Budgeted, budgetSpent, runDispatcher } from "../wakes";

/**
 * The hard cap on runs already running: when a cost event brings the agent's or the company's
 * monthly spend to its budget, every other running run it covers is asked to stop. The reason is
 * stored with the request (error_reason budget_exceeded on the running row; the run ends cancelled
 * with it when its runner reports the process gone), and the runner holding it gets a `cancel` frame.
 * A run that reports a cost of its own while it runs (POST …/cost-events with its key) is stopped by
 * it like any other; the run whose finish the event charges (`finishing`) is not: it is over.
 */
export async function stopRunsOverBudget(
  env: Env,
  db: Db,
  event: CostEventRow,
  over: { agent: Budgeted | undefined; company: Budgeted | undefined; finishing: string | null },
  actor: ActorRef,
  now: number,
): Promise<void> {
  const level =
    over.company && budgetSpent(over.company)
      ? "company"
      : over.agent && budgetSpent(over.agent)
        ? "agent"
        : null;
  if (!level) return;
  const scope =
    level === "company"
      ? eq(heartbeatRuns.companyId, event.companyId)
      : eq(heartbeatRuns.agentId, event.agentId);
  await stopRunsIn(
    env,
    db,
    scope,
    { budget: level, costEventId: event.id, finishing: over.finishing },
    actor,
    now,
  );
}

/**
 * Every running run matching `scope` (but the finishing one) asked to stop for a budget: marked
 * budget_exceeded, an activity row each (heartbeat_run.budget_stopped, details naming the budget),
 * and a `cancel` frame to the runner holding it.
 */
export async function stopRunsIn(
  env: Env,
  db: Db,
  scope: SQL,
  cause: { budget: string; costEventId: string | null; finishing: string | null; incidentId?: string },
  actor: ActorRef,
  now: number,
): Promise<void> {
  const stopped = await askRunsToStop(db, scope, cause.finishing, now);
  const companyId = stopped[0]?.companyId;
  const [first, ...rest] = stopped.map((run) =>
    activityInsert(
      db,
      {
        companyId: run.companyId,
        actor,
        action: "heartbeat_run.budget_stopped",
        entityType: "heartbeat_run",
        entityId: run.id,
        details: {
          agentId: run.agentId,
          budget: cause.budget,
          costEventId: cause.costEventId,
          ...(cause.incidentId ? { incidentId: cause.incidentId } : {}),
        },
      },
      now,
    ),
  );
  if (!first || companyId === undefined) return;
  await db.batch([first, ...rest]);
  const dispatcher = runDispatcher(env);
  for (const run of stopped) if (run.runnerLinkId) await dispatcher.cancelRun(run.id, run.runnerLinkId);
}

/** Running runs in `scope` not yet asked to stop, marked with the reason; `except`: the charged run. */
const askRunsToStop = (db: Db, scope: SQL, except: string | null, now: number) =>
  db
    .update(heartbeatRuns)
    .set({ cancelRequestedAt: now, errorReason: "budget_exceeded" })
    .where(
      and(
        scope,
        eq(heartbeatRuns.status, "running"),
        isNull(heartbeatRuns.cancelRequestedAt),
        except === null ? undefined : ne(heartbeatRuns.id, except),
      ),
    )
    .returning({
      id: heartbeatRuns.id,
      companyId: heartbeatRuns.companyId,
      agentId: heartbeatRuns.agentId,
      runnerLinkId: heartbeatRuns.runnerLinkId,
    });
