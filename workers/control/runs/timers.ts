import { and, eq, inArray, sql } from "drizzle-orm";
import type { Env } from "../../core/env";
import type { Db } from "../../db/client";
import { type AgentRow, agents, companies, issues } from "../../db/schema";
import { heartbeatSettings, runsQueued, wakeInsert, wakeRefusal, wakeRun } from "../wakes";
import { sweepSilentRuns } from "./lifecycle";

/** Statuses of work an agent can act on when its timer fires. */
const ACTIONABLE = ["todo", "in_progress", "blocked"] as const;
const MIN_INTERVAL_SEC = 60;

interface HeartbeatTimer {
  enabled: boolean;
  intervalSec: number;
}

/** runtimeConfig.heartbeat {enabled, intervalSec}; null when the agent has no working timer. */
export function timerOf(agent: Pick<AgentRow, "runtimeConfig">): HeartbeatTimer | null {
  const { enabled, intervalSec } = heartbeatSettings(agent);
  if (enabled !== true || typeof intervalSec !== "number" || !Number.isFinite(intervalSec)) return null;
  return { enabled, intervalSec: Math.max(MIN_INTERVAL_SEC, Math.floor(intervalSec)) };
}

/** Agents with assigned work in an actionable status: only they are woken by their timer. */
async function agentsWithWork(db: Db, agentIds: string[]): Promise<Set<string>> {
  if (agentIds.length === 0) return new Set();
  const rows = await db
    .selectDistinct({ agentId: issues.assigneeAgentId })
    .from(issues)
    .where(and(inArray(issues.assigneeAgentId, agentIds), inArray(issues.status, [...ACTIONABLE])));
  return new Set(rows.map((row) => row.agentId).filter((id): id is string => id !== null));
}

/**
 * Claims the timer tick with a conditional UPDATE on last_heartbeat_at, so overlapping cron
 * invocations wake an agent once; only the winner queues the run. (Two statements: a failure between
 * them loses one tick, which the next interval makes up, rather than ever waking twice.)
 */
async function fireTimer(db: Db, agent: AgentRow, now: number): Promise<boolean> {
  const claimed = await db
    .update(agents)
    .set({ lastHeartbeatAt: now })
    .where(
      and(
        eq(agents.id, agent.id),
        agent.lastHeartbeatAt === null
          ? sql`${agents.lastHeartbeatAt} IS NULL`
          : eq(agents.lastHeartbeatAt, agent.lastHeartbeatAt),
      ),
    )
    .run();
  if (claimed.meta.changes !== 1) return false;
  await wakeInsert(db, wakeRun(agent, { source: "timer", reason: "heartbeat_timer" }, now));
  return true;
}

/**
 * Cron: wakes every runnable agent whose heartbeat interval has passed AND that has actionable work
 * (an idle agent with nothing to do is not woken: each wake costs budget). An agent that already has
 * a queued or running run is not woken again. Returns how many timers fired.
 */
export async function fireHeartbeatTimers(env: Env, db: Db, now: number): Promise<number> {
  const candidates = await db
    .select({ agent: agents })
    .from(agents)
    .innerJoin(companies, eq(companies.id, agents.companyId))
    .where(
      and(
        // A paused or archived company starts no runs: its timers do not even fire.
        eq(companies.status, "active"),
        inArray(agents.status, ["idle", "running", "error"]),
        sql`json_extract(${agents.runtimeConfig}, '$.heartbeat.enabled') = 1`,
        sql`NOT EXISTS (SELECT 1 FROM heartbeat_runs r WHERE r.agent_id = ${agents.id} AND r.status IN ('queued', 'running'))`,
      ),
    );
  const due = candidates
    .map((row) => row.agent)
    .filter((agent) => {
      const timer = timerOf(agent);
      if (!timer || wakeRefusal(agent)) return false;
      return agent.lastHeartbeatAt === null || agent.lastHeartbeatAt + timer.intervalSec * 1000 <= now;
    });
  const withWork = await agentsWithWork(
    db,
    due.map((agent) => agent.id),
  );
  let fired = 0;
  for (const agent of due) if (withWork.has(agent.id) && (await fireTimer(db, agent, now))) fired++;
  if (fired > 0) await runsQueued(env);
  return fired;
}

/** The runner half of the cron: timers, then runs whose runner went silent. */
export async function runnerCron(env: Env, db: Db, now: number): Promise<void> {
  await fireHeartbeatTimers(env, db, now);
  await sweepSilentRuns(env, db, now);
}
