import type { Cron } from "croner";
import { and, asc, eq, lte } from "drizzle-orm";
import type { Env } from "../../core/env";
import type { Db } from "../../db/client";
import { database } from "../../db/client";
import { type RoutineRow, type RoutineTriggerRow, routines, routineTriggers } from "../../db/schema";
import { runsQueued } from "../wakes";
import { CATCH_UP_CAP, dueTicks, isSubHourly, nextTick, parseSchedule } from "./cron";
import { dispatchRoutineRun, violates } from "./dispatch";

/**
 * Schedule triggers, driven by the Worker's every-minute cron (`scheduled()` in workers/index.ts).
 * Each due trigger is claimed with a conditional UPDATE on its stored next_run_at, so a due minute
 * fires once even when two scheduled() invocations overlap; routine_runs' unique
 * (trigger_id, scheduled_for) is the second guard.
 */

/** Triggers handled per invocation; the rest are still due at the next minute. */
const MAX_DUE_PER_TICK = 500;
/** Triggers dispatched in parallel (each is a few D1 round trips). */
const PARALLEL = 8;

export interface ScheduleTickResult {
  /** Triggers this invocation claimed. */
  claimed: number;
  /** Routine runs recorded (several per trigger when missed ticks are caught up). */
  runs: number;
}

interface DueTrigger {
  trigger: RoutineTriggerRow;
  routine: RoutineRow;
}

const dueTriggers = (db: Db, nowMs: number) =>
  db
    .select({ trigger: routineTriggers, routine: routines })
    .from(routineTriggers)
    .innerJoin(routines, eq(routines.id, routineTriggers.routineId))
    .where(
      and(
        eq(routineTriggers.kind, "schedule"),
        eq(routineTriggers.enabled, true),
        lte(routineTriggers.nextRunAt, nowMs),
        eq(routines.status, "active"),
      ),
    )
    .orderBy(asc(routineTriggers.nextRunAt))
    .limit(MAX_DUE_PER_TICK);

/**
 * Moves next_run_at from the value we read to the next future tick; true only for the one caller
 * whose UPDATE matched (a concurrent invocation that read the same value finds it changed).
 */
async function claim(db: Db, trigger: RoutineTriggerRow, due: number, next: number | null, nowMs: number) {
  const rows = await db
    .update(routineTriggers)
    .set({ nextRunAt: next, lastFiredAt: nowMs })
    .where(
      and(
        eq(routineTriggers.id, trigger.id),
        eq(routineTriggers.nextRunAt, due),
        eq(routineTriggers.enabled, true),
      ),
    )
    .returning({ id: routineTriggers.id });
  return rows.length === 1;
}

/**
 * The due minutes to fire: the stored one alone (skip_missed, and any cron that fires more than once
 * an hour), or every missed tick up to the cap (enqueue_missed_with_cap).
 */
function ticksToFire(cron: Cron, routine: RoutineRow, due: number, nowMs: number): number[] {
  if (routine.catchUpPolicy !== "enqueue_missed_with_cap" || isSubHourly(cron, due)) return [due];
  return dueTicks(cron, due, nowMs, CATCH_UP_CAP);
}

async function fireTrigger(db: Db, { trigger, routine }: DueTrigger, nowMs: number) {
  const due = trigger.nextRunAt;
  if (due === null || trigger.cronExpression === null) return { claimed: false, runs: 0, queued: false };
  const cron = parseSchedule(trigger.cronExpression, trigger.timezone ?? "UTC");
  const ticks = ticksToFire(cron, routine, due, nowMs);
  if (!(await claim(db, trigger, due, nextTick(cron, nowMs), nowMs)))
    return { claimed: false, runs: 0, queued: false };
  let runs = 0;
  let queued = false;
  const latest = ticks[ticks.length - 1];
  for (const tick of ticks) {
    try {
      const dispatched = await dispatchRoutineRun(db, routine, {
        source: tick === latest ? "schedule" : "catch_up",
        triggerId: trigger.id,
        scheduledFor: tick,
        payload: null,
        actor: null,
      });
      runs += 1;
      queued ||= dispatched.queued;
    } catch (error) {
      // Already fired for this minute (the unique guard): nothing to do.
      if (!violates(error, "routine_runs")) throw error;
    }
  }
  return { claimed: true, runs, queued };
}

function logFailure(error: unknown, trigger?: RoutineTriggerRow): void {
  console.error(
    JSON.stringify({
      level: "error",
      msg: "routine schedule fire failed",
      triggerId: trigger?.id ?? null,
      routineId: trigger?.routineId ?? null,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    }),
  );
}

/**
 * Fires every schedule trigger due at `scheduledTimeMs` (the cron's scheduled time). Never throws:
 * failures are logged, so whatever else scheduled() runs after it (heartbeat timers) still runs.
 */
export async function fireDueSchedules(env: Env, scheduledTimeMs: number): Promise<ScheduleTickResult> {
  const result: ScheduleTickResult = { claimed: 0, runs: 0 };
  try {
    return await fireAll(env, scheduledTimeMs, result);
  } catch (error) {
    logFailure(error);
    return result;
  }
}

async function fireAll(env: Env, scheduledTimeMs: number, result: ScheduleTickResult) {
  const db = database(env.DB);
  const due = await dueTriggers(db, scheduledTimeMs);
  let queued = false;
  for (let i = 0; i < due.length; i += PARALLEL) {
    const slice = due.slice(i, i + PARALLEL);
    const outcomes = await Promise.allSettled(slice.map((item) => fireTrigger(db, item, scheduledTimeMs)));
    outcomes.forEach((outcome, j) => {
      const item = slice[j];
      if (outcome.status === "rejected") {
        if (item) logFailure(outcome.reason, item.trigger);
        return;
      }
      if (outcome.value.claimed) result.claimed += 1;
      result.runs += outcome.value.runs;
      queued ||= outcome.value.queued;
    });
  }
  if (queued) await runsQueued(env);
  return result;
}
