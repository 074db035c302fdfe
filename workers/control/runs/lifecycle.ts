import { and, eq, inArray, isNotNull, isNull, lt, sql } from "drizzle-orm";
import type { RunnerFrame } from "../../../bridge/src/protocol/runner";
import { agentCredentialsChanged } from "../../auth/agent-key-store";
import type { Env } from "../../core/env";
import type { Db } from "../../db/client";
import {
  agentApiKeys,
  agents,
  type HeartbeatRunRow,
  heartbeatRunLogChunks,
  heartbeatRuns,
  issues,
} from "../../db/schema";
import { recordCostEvent } from "../costs";
import { issueObject } from "../issues";
import { announceLater, queueFailedRunNotices } from "../line";
import { RUNNER_SILENCE_MS } from "../runners";
import { type AnnouncedRun, announcedColumns, announceRun } from "./live";
import type { OutputRedactor } from "./redaction";
import { recordSession } from "./sessions";
import { eventsComplete } from "./transcript";

/**
 * What happens to a run once a runner holds it: its output, its heartbeats, and how it ends. Every
 * ending gives back what the run held (its key, the issues it checked out) and settles its agent's
 * status. Claiming is in claim.ts.
 */

/** The last this many characters of output are kept on the run row for quick reading. */
export const EXCERPT_CHARS = 16 * 1024;
/** A run's stored log stops growing here (the excerpt still follows the tail). */
const LOG_MAX_CHUNKS = 2_000;

type FinishFrame = Extract<RunnerFrame, { type: "finish" }>;
type LogFrame = Extract<RunnerFrame, { type: "log" }>;

/**
 * Appends output, scrubbed of the company's secrets (redaction.ts); the excerpt on the run row keeps
 * the tail. Ignored for runs this link does not hold. Answers the run whose log grew (null when
 * nothing was stored), for the issue page's feed.
 */
export async function recordLog(
  db: Db,
  linkId: string,
  frame: LogFrame,
  redactor: OutputRedactor,
): Promise<AnnouncedRun | null> {
  const run = await db
    .select(announcedColumns)
    .from(heartbeatRuns)
    .where(and(eq(heartbeatRuns.id, frame.runId), eq(heartbeatRuns.runnerLinkId, linkId)))
    .get();
  if (!run) return null;
  const now = Date.now();
  if (frame.seq >= LOG_MAX_CHUNKS) {
    await db.update(heartbeatRuns).set({ heartbeatAt: now }).where(eq(heartbeatRuns.id, frame.runId));
    return null;
  }
  // Nothing to store while the frame waits for earlier ones (redaction.ts puts them in order).
  const chunks = await redactor.output(db, linkId, run, frame);
  for (const chunk of chunks) await storeChunk(db, { runId: run.id, ...chunk }, now);
  return chunks.length > 0 ? run : null;
}

/** One stored chunk of output, and the excerpt rebuilt with it. */
function storeChunk(
  db: Db,
  chunk: { runId: string; seq: number; stream: LogFrame["stream"]; text: string },
  now: number,
) {
  // Frames may arrive out of order: the excerpt is rebuilt from the newest chunks in seq order,
  // so it is right once every frame has landed, whatever order they came in.
  return db.batch([
    db
      .insert(heartbeatRunLogChunks)
      .values({ ...chunk, createdAt: now })
      .onConflictDoNothing(),
    db
      .update(heartbeatRuns)
      .set({ logExcerpt: excerptFromChunks(chunk.runId), heartbeatAt: now })
      .where(eq(heartbeatRuns.id, chunk.runId)),
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

/**
 * Whether this link holds the run and it is still running: only then may a frame of the link end it.
 * A finish for anyone else's run id (another tenant's runner guessing or replaying one) is ignored.
 */
export async function linkHoldsRun(db: Db, linkId: string, runId: string): Promise<boolean> {
  const row = await db
    .select({ id: heartbeatRuns.id })
    .from(heartbeatRuns)
    .where(
      and(
        eq(heartbeatRuns.id, runId),
        eq(heartbeatRuns.runnerLinkId, linkId),
        eq(heartbeatRuns.status, "running"),
      ),
    )
    .get();
  return row !== undefined;
}

/** Whether every log and event frame the runner says it sent for the run has been stored. */
export async function logsComplete(
  db: Db,
  runId: string,
  logFrames: number,
  eventFrames = 0,
): Promise<boolean> {
  if (!(await eventsComplete(db, runId, eventFrames))) return false;
  const expected = Math.min(logFrames, LOG_MAX_CHUNKS);
  if (expected === 0) return true;
  const row = await db
    .select({ count: sql<number>`count(*)` })
    .from(heartbeatRunLogChunks)
    .where(eq(heartbeatRunLogChunks.runId, runId))
    .get();
  return (row?.count ?? 0) >= expected;
}

export async function touchRuns(db: Db, linkId: string, runIds: string[]): Promise<void> {
  if (runIds.length === 0) return;
  await db
    .update(heartbeatRuns)
    .set({ heartbeatAt: Date.now() })
    .where(and(inArray(heartbeatRuns.id, runIds), eq(heartbeatRuns.runnerLinkId, linkId)));
}

interface Ending {
  status: "failed" | "timed_out" | "cancelled" | "succeeded";
  errorReason?: string;
  exitCode?: number | null;
}

/**
 * Ends a running run and gives back what it held: its key is revoked and, unless it succeeded, every
 * issue it still holds in progress is released (through the issue's IssueDO, like any issue
 * mutation). Then its agent's status settles. A run that already ended is left alone.
 */
export async function endRun(env: Env, db: Db, run: HeartbeatRunRow, ending: Ending): Promise<void> {
  const now = Date.now();
  const [ended] = await db
    .update(heartbeatRuns)
    .set({
      status: ending.status,
      errorReason: ending.errorReason ?? null,
      exitCode: ending.exitCode ?? null,
      finishedAt: now,
    })
    .where(and(eq(heartbeatRuns.id, run.id), eq(heartbeatRuns.status, "running")))
    .returning({ id: heartbeatRuns.id });
  if (!ended) return;
  await revokeRunKey(env, db, run, now);
  if (ending.status !== "succeeded")
    await releaseHeldIssues(env, db, run.id, ending.errorReason ?? ending.status);
  await settleAgent(db, run.agentId, ending.status === "failed" || ending.status === "timed_out");
  await announceRun(env, { ...run, status: ending.status }, "run.ended");
  // A failed or timed-out run on an issue: its watchers hear of it on the line (the cron sends it).
  if (ending.status === "failed" || ending.status === "timed_out") {
    const ended = { ...run, status: ending.status, errorReason: ending.errorReason ?? null };
    await announceLater(env, run.companyId, (tx, origin, at) => queueFailedRunNotices(tx, ended, origin, at));
  }
}

/**
 * `running` → `idle` (or `error` after a failure) once none of the agent's runs runs any more; an
 * agent paused, terminated or otherwise moved meanwhile keeps the status it was given.
 */
async function settleAgent(db: Db, agentId: string, failed: boolean): Promise<void> {
  await db
    .update(agents)
    .set({ status: failed ? "error" : "idle" })
    .where(
      and(
        eq(agents.id, agentId),
        eq(agents.status, "running"),
        sql`NOT EXISTS (SELECT 1 FROM ${heartbeatRuns} WHERE ${heartbeatRuns.agentId} = ${agentId} AND ${heartbeatRuns.status} = 'running')`,
      ),
    );
}

async function revokeRunKey(env: Env, db: Db, run: HeartbeatRunRow, now: number): Promise<void> {
  await db
    .update(agentApiKeys)
    .set({ revokedAt: now })
    .where(and(eq(agentApiKeys.runId, run.id), isNull(agentApiKeys.revokedAt)));
  await agentCredentialsChanged(env, run.agentId);
}

async function releaseHeldIssues(env: Env, db: Db, runId: string, reason: string): Promise<void> {
  const held = await db
    .select({ id: issues.id, companyId: issues.companyId })
    .from(issues)
    .where(eq(issues.checkoutRunId, runId));
  for (const issue of held) {
    await issueObject(env, issue).apply(issue, { kind: "releaseRun", runId, reason });
  }
}

/**
 * The runner's report: exit 0 succeeds, anything else fails; a run someone cancelled ends cancelled,
 * and one that ran out of time timed_out, whatever its exit code.
 */
export async function finishRun(
  env: Env,
  db: Db,
  linkId: string,
  reported: FinishFrame,
  redactor: OutputRedactor,
): Promise<void> {
  const run = await db
    .select()
    .from(heartbeatRuns)
    .where(and(eq(heartbeatRuns.id, reported.runId), eq(heartbeatRuns.runnerLinkId, linkId)))
    .get();
  if (run?.status !== "running") return;
  const now = Date.now();
  const frame = await settleOutput(db, linkId, run, reported, redactor, now);
  await db
    .update(heartbeatRuns)
    .set({
      usage: frame.usage ?? null,
      costCents: frame.costCents ?? 0,
      sessionId: frame.session?.id ?? null,
      sessionResumed: frame.resumed === true,
      heartbeatAt: now,
    })
    .where(eq(heartbeatRuns.id, run.id));
  if (frame.session !== undefined) {
    const agent = await db
      .select({ adapterType: agents.adapterType })
      .from(agents)
      .where(eq(agents.id, run.agentId))
      .get();
    if (agent) await recordSession(db, run, agent.adapterType, frame.session, now);
  }
  if (frame.costCents) await chargeRun(env, db, run, frame, now);
  await endRun(env, db, run, endingOf(run, frame));
}

/**
 * The end of a run's output: what its streams held back is stored after its last frame, and the
 * finish's own text (the error, usage) is scrubbed like the output it often quotes.
 */
async function settleOutput(
  db: Db,
  linkId: string,
  run: HeartbeatRunRow,
  frame: FinishFrame,
  redactor: OutputRedactor,
  now: number,
): Promise<FinishFrame> {
  const scrubber = await redactor.scrubber(db, run);
  const { parked, tails } = await redactor.release(db, linkId, run);
  for (const chunk of parked) await storeChunk(db, { runId: run.id, ...chunk }, now);
  const after = Math.max(frame.logFrames, ...parked.map((chunk) => chunk.seq + 1));
  for (const [index, tail] of tails.entries())
    await storeChunk(db, { runId: run.id, seq: after + index, ...tail }, now);
  return {
    ...frame,
    ...(frame.error !== undefined ? { error: scrubber.scrub(frame.error) } : {}),
    ...(frame.usage !== undefined ? { usage: scrubber.scrubJson(frame.usage) } : {}),
  };
}

function endingOf(run: HeartbeatRunRow, frame: FinishFrame): Ending {
  const exitCode = frame.exitCode;
  // The stop's reason was stored with the request (budget_exceeded), else someone cancelled it.
  if (run.cancelRequestedAt !== null)
    return { status: "cancelled", errorReason: run.errorReason ?? "cancelled", exitCode };
  if (frame.timedOut) return { status: "timed_out", errorReason: frame.error ?? "timeout", exitCode };
  // The CLI stopped itself at the run's budget (RunAssignment.budgetCents): the same end as a stop
  // the edge asked for when a budget was reached.
  if (frame.error?.startsWith("budget_exceeded"))
    return { status: "cancelled", errorReason: "budget_exceeded", exitCode };
  if (frame.error) return { status: "failed", errorReason: frame.error, exitCode };
  if (exitCode !== 0) return { status: "failed", errorReason: `exit code ${exitCode}`, exitCode };
  return { status: "succeeded", exitCode: 0 };
}

const usageCount = (usage: Record<string, unknown> | undefined, field: string): number => {
  const value = usage?.[field];
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : 0;
};

/**
 * A run's reported cost becomes a cost event of its agent, through the same path as POST
 * …/cost-events, so it counts toward every budget it spends from (and can pause the agent at 100 %):
 * charged to its issue's project, as an event reported against an issue is.
 */
export async function chargeRun(
  env: Env,
  db: Db,
  run: HeartbeatRunRow,
  frame: Pick<FinishFrame, "usage" | "costCents">,
  now: number,
): Promise<void> {
  const usage = frame.usage;
  const issue = run.issueId
    ? await db.select({ projectId: issues.projectId }).from(issues).where(eq(issues.id, run.issueId)).get()
    : undefined;
  await recordCostEvent(
    env,
    db,
    {
      companyId: run.companyId,
      agentId: run.agentId,
      issueId: run.issueId,
      projectId: issue?.projectId ?? null,
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
    run.id,
  );
}

/** Every run a link held when it closed (or its runner was revoked): failed, locks released. */
export async function failLinkRuns(env: Env, db: Db, linkId: string, reason = "runner_lost"): Promise<void> {
  const held = await db
    .select()
    .from(heartbeatRuns)
    .where(and(eq(heartbeatRuns.runnerLinkId, linkId), eq(heartbeatRuns.status, "running")));
  for (const run of held) await endRun(env, db, run, { status: "failed", errorReason: reason });
}

/**
 * The cron's safety net for what a closing socket cannot report (the dispatcher itself restarted, an
 * edge deploy): running runs whose runner has been silent too long are failed as runner_lost. An
 * http run has no runner (its deadline is the dispatcher's alarm, runs/http-adapter.ts).
 */
export async function sweepSilentRuns(env: Env, db: Db, now: number): Promise<number> {
  const silent = await db
    .select()
    .from(heartbeatRuns)
    .where(
      and(
        eq(heartbeatRuns.status, "running"),
        isNotNull(heartbeatRuns.runnerId),
        lt(heartbeatRuns.heartbeatAt, now - RUNNER_SILENCE_MS),
      ),
    );
  for (const run of silent) await endRun(env, db, run, { status: "failed", errorReason: "runner_lost" });
  return silent.length;
}
