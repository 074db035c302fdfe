import { and, asc, eq, inArray, isNull, lt, sql } from "drizzle-orm";
import type { RunAssignment, RunnerFrame } from "../../../bridge/src/protocol/runner";
import { generateAgentKey } from "../../auth/agent-key-format";
import { agentCredentialsChanged } from "../../auth/agent-key-store";
import type { Env } from "../../core/env";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import {
  type AgentRow,
  agentApiKeys,
  agents,
  type HeartbeatRunRow,
  heartbeatRunLogChunks,
  heartbeatRuns,
  issueApprovals,
  issues,
} from "../../db/schema";
import { recordCostEvent } from "../costs";
import { issueObject } from "../issues";
import { wakeRefusal } from "../wakes";
import { runEnvironment } from "./environment";

/** Adapters that run on a user's machine, through a bridge's runner. */
export const LOCAL_ADAPTERS = ["coder_local", "assistant_local"] as const;
/** The last this many characters of output are kept on the run row for quick reading. */
const EXCERPT_CHARS = 16 * 1024;
/** A run's stored log stops growing here (the excerpt still follows the tail). */
const LOG_MAX_CHUNKS = 2_000;
/** A running run whose runner has not said anything for this long is declared lost (cron sweep). */
export const RUNNER_SILENCE_MS = 90_000;
const DEFAULT_TIMEOUT_SEC = 600;

type FinishFrame = Extract<RunnerFrame, { type: "finish" }>;
type LogFrame = Extract<RunnerFrame, { type: "log" }>;

/** The oldest queued run of a local adapter, moved to running for `runnerId` (one statement: atomic). */
async function takeOldestQueued(db: Db, runnerId: string, now: number): Promise<HeartbeatRunRow | undefined> {
  const oldest = db
    .select({ id: heartbeatRuns.id })
    .from(heartbeatRuns)
    .innerJoin(agents, eq(agents.id, heartbeatRuns.agentId))
    .where(and(eq(heartbeatRuns.status, "queued"), inArray(agents.adapterType, [...LOCAL_ADAPTERS])))
    .orderBy(asc(heartbeatRuns.createdAt))
    .limit(1);
  const [taken] = await db
    .update(heartbeatRuns)
    .set({ status: "running", runnerId, startedAt: now, heartbeatAt: now })
    .where(and(eq(heartbeatRuns.status, "queued"), eq(heartbeatRuns.id, sql`(${oldest})`)))
    .returning();
  return taken;
}

/** A run taken for an agent that may no longer run (paused, over budget since it was queued). */
async function refuse(db: Db, run: HeartbeatRunRow, reason: string, now: number): Promise<void> {
  await db
    .update(heartbeatRuns)
    .set({ status: "cancelled", errorReason: reason, finishedAt: now })
    .where(eq(heartbeatRuns.id, run.id));
}

/** A key valid only while this run runs: revoked when it finishes, whatever the outcome. */
async function mintRunKey(db: Db, run: HeartbeatRunRow, now: number): Promise<string> {
  const generated = await generateAgentKey(run.agentId);
  await db.insert(agentApiKeys).values({
    id: newId(),
    agentId: run.agentId,
    companyId: run.companyId,
    name: `run ${run.id}`,
    keyHash: generated.hash,
    displayPrefix: generated.displayPrefix,
    createdByUserId: null,
    createdByAgentId: null,
    lastUsedAt: null,
    revokedAt: null,
    runId: run.id,
    createdAt: now,
  });
  return generated.key;
}

const linkedIssueIds = async (db: Db, approvalId: string | null) =>
  approvalId === null
    ? []
    : (
        await db
          .select({ issueId: issueApprovals.issueId })
          .from(issueApprovals)
          .where(eq(issueApprovals.approvalId, approvalId))
      ).map((row) => row.issueId);

/**
 * Claims the next runnable run for a runner and prepares everything its process needs. Null when
 * nothing is queued. A run whose agent may no longer run is cancelled with the reason (never started),
 * as is one whose configuration cannot be turned into a process (no command, unknown secret).
 */
export async function claimNextRun(
  env: Env,
  db: Db,
  runnerId: string,
  apiUrl: string,
): Promise<RunAssignment | null> {
  for (;;) {
    const now = Date.now();
    const run = await takeOldestQueued(db, runnerId, now);
    if (!run) return null;
    const agent = await db.select().from(agents).where(eq(agents.id, run.agentId)).get();
    const refusal = agent ? wakeRefusal(agent) : "agent_missing";
    if (!agent || refusal) {
      await refuse(db, run, refusal ?? "agent_missing", now);
      continue;
    }
    try {
      return await assignment(env, db, run, agent, apiUrl, now);
    } catch (error) {
      await failRun(env, db, run, { errorReason: `configuration: ${String((error as Error).message)}` });
    }
  }
}

async function assignment(
  env: Env,
  db: Db,
  run: HeartbeatRunRow,
  agent: AgentRow,
  apiUrl: string,
  now: number,
): Promise<RunAssignment> {
  const prepared = await runEnvironment(env, db, agent, {
    run,
    apiUrl,
    linkedIssueIds: await linkedIssueIds(db, run.approvalId),
  });
  const key = await mintRunKey(db, run, now);
  await db.update(agents).set({ lastHeartbeatAt: now }).where(eq(agents.id, agent.id));
  return {
    runId: run.id,
    agentId: agent.id,
    adapterType: agent.adapterType,
    command: prepared.command,
    args: prepared.args,
    cwd: prepared.cwd,
    prompt: prepared.prompt,
    timeoutSec: prepared.timeoutSec ?? DEFAULT_TIMEOUT_SEC,
    env: { ...prepared.env, PLATFORM_API_KEY: key },
  };
}

/** Appends output; the excerpt on the run row keeps the tail. Ignored for runs this runner does not hold. */
export async function recordLog(db: Db, runnerId: string, frame: LogFrame): Promise<void> {
  const run = await db
    .select({ id: heartbeatRuns.id })
    .from(heartbeatRuns)
    .where(and(eq(heartbeatRuns.id, frame.runId), eq(heartbeatRuns.runnerId, runnerId)))
    .get();
  if (!run) return;
  const now = Date.now();
  if (frame.seq >= LOG_MAX_CHUNKS) {
    await db.update(heartbeatRuns).set({ heartbeatAt: now }).where(eq(heartbeatRuns.id, frame.runId));
    return;
  }
  // Frames may arrive out of order: the excerpt is rebuilt from the newest chunks in seq order,
  // so it is right once every frame has landed, whatever order they came in.
  await db.batch([
    db
      .insert(heartbeatRunLogChunks)
      .values({ runId: frame.runId, seq: frame.seq, stream: frame.stream, text: frame.text, createdAt: now })
      .onConflictDoNothing(),
    db
      .update(heartbeatRuns)
      .set({ logExcerpt: excerptFromChunks(frame.runId), heartbeatAt: now })
      .where(eq(heartbeatRuns.id, frame.runId)),
  ]);
}

/** Chunks that can fill the excerpt (each frame carries at most 16 KiB, usually far less). */
const EXCERPT_CHUNKS = 64;

const excerptFromChunks = (runId: string) => sql`(
  SELECT substr(group_concat(text, ''), ${-EXCERPT_CHARS}) FROM (
    SELECT text, seq FROM (
      SELECT text, seq FROM heartbeat_run_log_chunks WHERE run_id = ${runId} ORDER BY seq DESC LIMIT ${EXCERPT_CHUNKS}
    ) ORDER BY seq
  )
)`;

/** Whether every log frame the runner says it sent for the run has been stored. */
export async function logsComplete(db: Db, runId: string, logFrames: number): Promise<boolean> {
  const expected = Math.min(logFrames, LOG_MAX_CHUNKS);
  if (expected === 0) return true;
  const row = await db
    .select({ count: sql<number>`count(*)` })
    .from(heartbeatRunLogChunks)
    .where(eq(heartbeatRunLogChunks.runId, runId))
    .get();
  return (row?.count ?? 0) >= expected;
}

export async function touchRuns(db: Db, runnerId: string, runIds: string[]): Promise<void> {
  if (runIds.length === 0) return;
  await db
    .update(heartbeatRuns)
    .set({ heartbeatAt: Date.now() })
    .where(and(inArray(heartbeatRuns.id, runIds), eq(heartbeatRuns.runnerId, runnerId)));
}

interface Ending {
  status?: "failed" | "timed_out";
  errorReason: string;
  exitCode?: number | null;
}

/**
 * Ends a run that did not succeed and gives back what it held: its key is revoked and every issue it
 * still holds in progress is released (through the issue's IssueDO, like any issue mutation).
 */
export async function failRun(env: Env, db: Db, run: HeartbeatRunRow, ending: Ending): Promise<void> {
  const now = Date.now();
  const [ended] = await db
    .update(heartbeatRuns)
    .set({
      status: ending.status ?? "failed",
      errorReason: ending.errorReason,
      exitCode: ending.exitCode ?? null,
      finishedAt: now,
    })
    .where(and(eq(heartbeatRuns.id, run.id), eq(heartbeatRuns.status, "running")))
    .returning({ id: heartbeatRuns.id });
  if (!ended) return;
  await revokeRunKey(env, db, run, now);
  await releaseHeldIssues(env, db, run.id, ending.errorReason);
}

async function revokeRunKey(env: Env, db: Db, run: HeartbeatRunRow, now: number): Promise<void> {
  await db
    .update(agentApiKeys)
    .set({ revokedAt: now })
    .where(and(eq(agentApiKeys.runId, run.id), isNull(agentApiKeys.revokedAt)));
  await agentCredentialsChanged(env, run.agentId);
}

async function releaseHeldIssues(env: Env, db: Db, runId: string, reason: string): Promise<void> {
  const held = await db.select({ id: issues.id }).from(issues).where(eq(issues.checkoutRunId, runId));
  for (const { id } of held) {
    await issueObject(env, id).apply(id, { kind: "releaseRun", runId, reason });
  }
}

/** The runner's report: exit 0 succeeds; anything else fails (and releases what the run held). */
export async function finishRun(env: Env, db: Db, runnerId: string, frame: FinishFrame): Promise<void> {
  const run = await db
    .select()
    .from(heartbeatRuns)
    .where(and(eq(heartbeatRuns.id, frame.runId), eq(heartbeatRuns.runnerId, runnerId)))
    .get();
  if (run?.status !== "running") return;
  const now = Date.now();
  await db
    .update(heartbeatRuns)
    .set({ usage: frame.usage ?? null, costCents: frame.costCents ?? 0, heartbeatAt: now })
    .where(eq(heartbeatRuns.id, run.id));
  if (frame.costCents) await chargeRun(env, db, run, frame, now);
  if (frame.timedOut)
    return failRun(env, db, run, { status: "timed_out", errorReason: "timeout", exitCode: frame.exitCode });
  if (frame.error) return failRun(env, db, run, { errorReason: frame.error, exitCode: frame.exitCode });
  if (frame.exitCode !== 0)
    return failRun(env, db, run, { errorReason: `exit code ${frame.exitCode}`, exitCode: frame.exitCode });
  const [done] = await db
    .update(heartbeatRuns)
    .set({ status: "succeeded", exitCode: 0, finishedAt: now })
    .where(and(eq(heartbeatRuns.id, run.id), eq(heartbeatRuns.status, "running")))
    .returning({ id: heartbeatRuns.id });
  if (done) await revokeRunKey(env, db, run, now);
}

const usageCount = (usage: Record<string, unknown> | undefined, field: string): number => {
  const value = usage?.[field];
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : 0;
};

/**
 * A run's reported cost becomes a cost event of its agent, through the same path as POST
 * …/cost-events, so it counts toward the monthly budget (and can pause the agent at 100 %).
 */
async function chargeRun(
  env: Env,
  db: Db,
  run: HeartbeatRunRow,
  frame: FinishFrame,
  now: number,
): Promise<void> {
  const usage = frame.usage;
  await recordCostEvent(
    env,
    db,
    {
      companyId: run.companyId,
      agentId: run.agentId,
      issueId: run.issueId,
      projectId: null,
      heartbeatRunId: run.id,
      provider: typeof usage?.provider === "string" ? usage.provider : "local_runner",
      model: typeof usage?.model === "string" ? usage.model : null,
      billingType: "unknown",
      inputTokens: usageCount(usage, "inputTokens"),
      cachedInputTokens: usageCount(usage, "cachedInputTokens"),
      outputTokens: usageCount(usage, "outputTokens"),
      costCents: frame.costCents ?? 0,
      occurredAt: now,
    },
    { type: "agent", agentId: run.agentId, companyId: run.companyId },
    now,
  );
}

/** Every run a runner held when its link dropped: failed as runner_lost, locks released. */
export async function failRunnerRuns(env: Env, db: Db, runnerId: string): Promise<void> {
  const held = await db
    .select()
    .from(heartbeatRuns)
    .where(and(eq(heartbeatRuns.runnerId, runnerId), eq(heartbeatRuns.status, "running")));
  for (const run of held) await failRun(env, db, run, { errorReason: "runner_lost" });
}

/**
 * The cron's safety net for what a closing socket cannot report (the dispatcher itself restarted, an
 * edge deploy): running runs whose runner has been silent too long are failed as runner_lost.
 */
export async function sweepSilentRuns(env: Env, db: Db, now: number): Promise<number> {
  const silent = await db
    .select()
    .from(heartbeatRuns)
    .where(and(eq(heartbeatRuns.status, "running"), lt(heartbeatRuns.heartbeatAt, now - RUNNER_SILENCE_MS)));
  for (const run of silent) await failRun(env, db, run, { errorReason: "runner_lost" });
  return silent.length;
}
