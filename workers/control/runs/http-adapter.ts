import { eq } from "drizzle-orm";
import type { Env } from "../../core/env";
import type { Db } from "../../db/client";
import {
  type AgentRow,
  agents,
  companies,
  type HeartbeatRunRow,
  heartbeatRuns,
  issues,
} from "../../db/schema";
import { cappedText } from "../../http/capped-text";
import { signedHeaders } from "../../webhooks/signing";
import { allowedHostsOf, webhookTargetProblem } from "../../webhooks/targets";
import { resolveSecretEnv } from "../secrets";
import { markAgentRunning, mintRunKey, startRefusal, takeOldestQueued } from "./claim";
import { chargeRun, endRun } from "./lifecycle";
import { announceRun } from "./live";

/**
 * The `http` adapter (docs/control-plane.md, "The http adapter"): a run is a signed POST to the
 * agent's URL, sent from the edge by the RunDispatcher (no runner). These functions are its steps;
 * the dispatcher keeps each run's HttpWake in its storage and its alarm drives retries and timeouts,
 * so a restart of the isolate loses neither.
 */
export const HTTP_ADAPTER = "http";
const DEFAULT_TIMEOUT_SEC = 600;
/** One attempt may take this long before it counts as a timeout (and is retried). */
const ATTEMPT_TIMEOUT_MS = 30_000;
const MAX_ATTEMPTS = 5;
const BACKOFF_MS = [1_000, 2_000, 5_000, 15_000];
/** Runs started per dispatch: the rest wait for the next nudge or alarm (a loop over user data has a budget). */
const START_BUDGET = 20;

/** A running http run as the dispatcher remembers it between attempts. */
export interface HttpWake {
  runId: string;
  /** Attempts made so far. */
  attempts: number;
  /** When the next attempt is due, or the deadline once the agent answered 202. */
  nextAt: number;
  /** startedAt + the run's timeout: a run still running then times out. */
  deadlineAt: number;
  /** The agent answered 202: it finishes through the API; only the deadline is left to watch. */
  accepted: boolean;
  /** The run-scoped key, minted once: every attempt of the run carries the same key. */
  apiKey: string;
}

const timeoutMsOf = (agent: AgentRow): number => {
  const timeout = agent.adapterConfig.timeoutSec;
  const seconds =
    typeof timeout === "number" && Number.isInteger(timeout) && timeout > 0 ? timeout : DEFAULT_TIMEOUT_SEC;
  return seconds * 1000;
};

/** The oldest queued run of an http agent (the claim's rules: claim.ts `takeOldestQueued`), moved to running. */
const takeQueuedHttpRun = (db: Db, now: number) =>
  takeOldestQueued(db, [eq(agents.adapterType, HTTP_ADAPTER)], { startedAt: now, heartbeatAt: now });

/** Starts queued http runs: each gets its key and the state its first attempt (due now) needs. */
export async function startHttpRuns(env: Env, db: Db, now: number): Promise<HttpWake[]> {
  const started: HttpWake[] = [];
  for (let budget = START_BUDGET; budget > 0; budget--) {
    const run = await takeQueuedHttpRun(db, now);
    if (!run) break;
    const [agent, company] = await Promise.all([
      db.select().from(agents).where(eq(agents.id, run.agentId)).get(),
      db.select().from(companies).where(eq(companies.id, run.companyId)).get(),
    ]);
    const { refusal } = await startRefusal(db, run, agent, company, now);
    if (!agent || refusal) {
      await endRun(env, db, run, { status: "cancelled", errorReason: refusal ?? "agent_missing" });
      continue;
    }
    const apiKey = await mintRunKey(db, run, now);
    await markAgentRunning(db, agent.id, now);
    await announceRun(env, run, "run.started");
    started.push({
      runId: run.id,
      attempts: 0,
      nextAt: now,
      deadlineAt: now + timeoutMsOf(agent),
      accepted: false,
      apiKey,
    });
  }
  return started;
}

/** The wake's body: who is woken, why, for which issue, and how to call back. */
async function wakeBody(db: Db, run: HeartbeatRunRow, agent: AgentRow, wake: HttpWake, apiUrl: string) {
  const issue = run.issueId
    ? await db
        .select({ id: issues.id, identifier: issues.identifier, title: issues.title })
        .from(issues)
        .where(eq(issues.id, run.issueId))
        .get()
    : undefined;
  return JSON.stringify({
    run: { id: run.id, source: run.invocationSource, reason: run.wakeReason, commentId: run.commentId },
    agent: { id: agent.id, name: agent.name },
    company: { id: run.companyId },
    issue: issue ?? null,
    apiUrl,
    apiKey: wake.apiKey,
    deadline: new Date(wake.deadlineAt).toISOString(),
  });
}

/** The agent's synchronous result: `usage` and `costCents` become the run's cost, as a runner's finish would. */
export interface WakeResult {
  usage?: Record<string, unknown>;
  costCents?: number;
}

/** The agent's answer is read up to this many bytes: past it, the run stands and its result is ignored. */
const RESULT_MAX_BYTES = 64 * 1024;

async function resultOf(response: Response): Promise<WakeResult> {
  const text = await cappedText(response, RESULT_MAX_BYTES).catch(() => null);
  let parsed: unknown = null;
  try {
    parsed = text === null ? null : JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (parsed === null || typeof parsed !== "object") return {};
  const { usage, costCents } = parsed as Record<string, unknown>;
  return {
    ...(usage !== null && typeof usage === "object" ? { usage: usage as Record<string, unknown> } : {}),
    ...(typeof costCents === "number" && Number.isInteger(costCents) && costCents >= 0 ? { costCents } : {}),
  };
}

/**
 * The run's end as its agent reports it (synchronously in the 200, or through POST
 * /heartbeat-runs/{runId}/finish): its usage and cost are recorded, then it ends like any run.
 */
export async function settleHttpRun(
  env: Env,
  db: Db,
  run: HeartbeatRunRow,
  result: WakeResult & { error?: string },
): Promise<void> {
  const now = Date.now();
  await db
    .update(heartbeatRuns)
    .set({ usage: result.usage ?? null, costCents: result.costCents ?? 0, heartbeatAt: now })
    .where(eq(heartbeatRuns.id, run.id));
  if (result.costCents) await chargeRun(env, db, run, result, now);
  await endRun(
    env,
    db,
    run,
    result.error === undefined
      ? { status: "succeeded", exitCode: 0 }
      : { status: "failed", errorReason: result.error },
  );
}

/** A failure worth another attempt: the agent's server erred, timed out or was not reached. */
const retryable = (status: number | null) =>
  status === null || status === 408 || status === 429 || status >= 500;

/**
 * One attempt of a run's wake. Returns the state to keep (a retry is due, or the agent accepted and
 * finishes through the API), or null when the run has ended (it succeeded, failed, or was already over).
 * The same run is always the same `Idempotency-Key` (its id); each attempt is its own signed message.
 */
export async function attemptHttpWake(
  env: Env,
  db: Db,
  wake: HttpWake,
  apiUrl: string,
): Promise<HttpWake | null> {
  const run = await db.select().from(heartbeatRuns).where(eq(heartbeatRuns.id, wake.runId)).get();
  if (run?.status !== "running") return null;
  const agent = await db.select().from(agents).where(eq(agents.id, run.agentId)).get();
  const url = typeof agent?.adapterConfig.url === "string" ? agent.adapterConfig.url : "";
  const problem = agent
    ? webhookTargetProblem(url, allowedHostsOf(env.WEBHOOK_ALLOWED_HOSTS))
    : "agent missing";
  if (!agent || problem) {
    await endRun(env, db, run, {
      status: "failed",
      errorReason: `configuration: adapterConfig.url ${problem}`,
    });
    return null;
  }
  let secret: string;
  try {
    const { WAKE_SECRET } = await resolveSecretEnv(env, db, run.companyId, agent.adapterConfig.env);
    if (!WAKE_SECRET) throw new Error("adapterConfig.env.WAKE_SECRET (the signing secret) is not set");
    secret = WAKE_SECRET;
  } catch (error) {
    await endRun(env, db, run, {
      status: "failed",
      errorReason: `configuration: ${(error as Error).message}`,
    });
    return null;
  }
  const attempts = wake.attempts + 1;
  const body = await wakeBody(db, run, agent, wake, apiUrl);
  const messageId = `wake_${run.id}_${attempts}`;
  const now = Date.now();
  let status: number | null = null;
  let response: Response | null = null;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Idempotency-Key": run.id,
        ...(await signedHeaders(secret, messageId, Math.floor(now / 1000), body)),
      },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(Math.min(ATTEMPT_TIMEOUT_MS, Math.max(1, wake.deadlineAt - now))),
    });
    status = response.status;
  } catch {
    status = null;
  }
  if (status === 200 && response) {
    await settleHttpRun(env, db, run, await resultOf(response));
    return null;
  }
  await response?.body?.cancel().catch(() => {});
  if (status !== null && status >= 200 && status < 300)
    return { ...wake, attempts, accepted: true, nextAt: wake.deadlineAt };
  const retryAt = Date.now() + (BACKOFF_MS[attempts - 1] ?? BACKOFF_MS[BACKOFF_MS.length - 1] ?? 1_000);
  if (retryable(status) && attempts < MAX_ATTEMPTS && retryAt < wake.deadlineAt)
    return { ...wake, attempts, nextAt: retryAt };
  const reason = status === null ? "unreachable" : `HTTP ${status}`;
  await endRun(env, db, run, {
    status: "failed",
    errorReason: `http agent: ${reason} after ${attempts} attempt(s)`,
  });
  return null;
}

/** The deadline passed with the run still running: it times out and its checkouts are released. */
export async function expireHttpWake(env: Env, db: Db, wake: HttpWake): Promise<void> {
  const run = await db.select().from(heartbeatRuns).where(eq(heartbeatRuns.id, wake.runId)).get();
  if (run?.status === "running") await endRun(env, db, run, { status: "timed_out", errorReason: "timeout" });
}

/** Whether the run still runs (an async agent finishes it through the API; then the dispatcher forgets it). */
export async function httpRunRunning(db: Db, runId: string): Promise<boolean> {
  const run = await db
    .select({ status: heartbeatRuns.status })
    .from(heartbeatRuns)
    .where(eq(heartbeatRuns.id, runId))
    .get();
  return run?.status === "running";
}
