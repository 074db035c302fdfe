import { and, asc, eq, inArray, isNull, type SQL, sql } from "drizzle-orm";
import type { RunAssignment } from "../../../bridge/src/protocol/runner";
import { generateAgentKey } from "../../auth/agent-key-format";
import type { Env } from "../../core/env";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import {
  ADAPTER_TYPES,
  type AgentRow,
  agentApiKeys,
  agents,
  companies,
  type HeartbeatRunRow,
  heartbeatRuns,
  issueApprovals,
  type RunnerRow,
  runners,
} from "../../db/schema";
import { type BudgetState, policyBudgetsOfRun, rowBudgets, smallestRemainder, spentBudget } from "../budgets";
import { coveredCompanyIds } from "../runners";
import { type Budgeted, wakeRefusal } from "../wakes";
import { runEnvironment } from "./environment";
import { endRun } from "./lifecycle";
import { announceRun } from "./live";
import { wakePayload } from "./payload";
import { sessionFor } from "./sessions";
import { runWorkspace } from "./workspace";

/** Adapters that run on a user's machine, through a registered runner: all but `http` (runs/http-adapter.ts). */
export const LOCAL_ADAPTERS = ADAPTER_TYPES.filter((type) => type !== "http");
const DEFAULT_TIMEOUT_SEC = 600;

/** One open runner link, as the RunDispatcher knows it. */
export interface RunnerLink {
  /** Fresh per connection: a runner that reconnects never adopts the runs of its previous link. */
  linkId: string;
  /** The registered runner (runners.id) whose token opened the link. */
  runnerId: string;
  /** The API's base URL as the runner reached the edge (origin + `/api`): the runs' PLATFORM_API_URL. */
  apiUrl: string;
}

/** runtimeConfig.maxConcurrentRuns when it is a positive integer, else 1. */
const maxConcurrentRuns = sql`CASE
  WHEN typeof(json_extract(${agents.runtimeConfig}, '$.maxConcurrentRuns')) = 'integer'
   AND json_extract(${agents.runtimeConfig}, '$.maxConcurrentRuns') >= 1
  THEN json_extract(${agents.runtimeConfig}, '$.maxConcurrentRuns') ELSE 1 END`;

/** Runs of the queued run's agent that are running now. */
const runningOfAgent = sql`(SELECT count(*) FROM ${heartbeatRuns} AS busy WHERE busy.agent_id = ${heartbeatRuns.agentId} AND busy.status = 'running')`;

/**
 * The queued run's company is below its maxConcurrentRuns (or has none): its running runs are counted
 * inside the claiming statement, so two claims at once cannot both take the last place.
 */
const companyBelowCap = sql`(${companies.maxConcurrentRuns} IS NULL OR (SELECT count(*) FROM ${heartbeatRuns} AS busy WHERE busy.company_id = ${heartbeatRuns.companyId} AND busy.status = 'running') < ${companies.maxConcurrentRuns})`;

/** The runner is below its own maxConcurrentRuns, whatever slots it claims (none set: always). */
const runnerBelowCap = (runner: RunnerRow) =>
  runner.maxConcurrentRuns === null
    ? undefined
    : sql`(SELECT count(*) FROM ${heartbeatRuns} AS busy WHERE busy.runner_id = ${runner.id} AND busy.status = 'running') < ${runner.maxConcurrentRuns}`;

/**
 * The oldest queued run (the id breaking ties) of an active company below its cap, of an agent below
 * its maxConcurrentRuns, that also meets `conditions`, moved to running with `set`: one statement, so
 * two claims at once never take the same run or the same last place. The local runners' claim and
 * the http adapter's (http-adapter.ts) are this with their own conditions.
 */
export async function takeOldestQueued(
  db: Db,
  conditions: ReadonlyArray<SQL | undefined>,
  set: Partial<HeartbeatRunRow>,
): Promise<HeartbeatRunRow | undefined> {
  const oldest = db
    .select({ id: heartbeatRuns.id })
    .from(heartbeatRuns)
    .innerJoin(agents, eq(agents.id, heartbeatRuns.agentId))
    .innerJoin(companies, eq(companies.id, heartbeatRuns.companyId))
    .where(
      and(
        eq(heartbeatRuns.status, "queued"),
        eq(companies.status, "active"),
        sql`${runningOfAgent} < ${maxConcurrentRuns}`,
        companyBelowCap,
        ...conditions,
      ),
    )
    .orderBy(asc(heartbeatRuns.createdAt), asc(heartbeatRuns.id))
    .limit(1);
  const [taken] = await db
    .update(heartbeatRuns)
    .set({ ...set, status: "running" })
    .where(and(eq(heartbeatRuns.status, "queued"), eq(heartbeatRuns.id, sql`(${oldest})`)))
    .returning();
  return taken;
}

/** The oldest queued run this runner may take: of a local adapter, of a company it serves right now, within its own cap. */
const takeOldestForRunner = (db: Db, runner: RunnerRow, linkId: string, now: number) =>
  takeOldestQueued(
    db,
    [
      inArray(agents.adapterType, [...LOCAL_ADAPTERS]),
      sql`${heartbeatRuns.companyId} IN ${coveredCompanyIds(runner)}`,
      runnerBelowCap(runner),
    ],
    { runnerId: runner.id, runnerLinkId: linkId, startedAt: now, heartbeatAt: now },
  );

/** A run taken for an agent that may no longer run (paused, its or its company's budget spent since it was queued). */
async function refuse(env: Env, db: Db, run: HeartbeatRunRow, reason: string, now: number): Promise<void> {
  await db
    .update(heartbeatRuns)
    .set({ status: "cancelled", errorReason: reason, finishedAt: now })
    .where(eq(heartbeatRuns.id, run.id));
  await announceRun(env, { ...run, status: "cancelled" }, "run.ended");
}

/**
 * What is left of the budgets a run spends from (the agent's and company's monthly ones, and every
 * policy covering it): the smallest remainder, or null when none is set. Only ever called for a run
 * the budgets allow (so at least 1).
 */
function budgetLeft(budgets: readonly BudgetState[]): number | null {
  const left = smallestRemainder(budgets);
  return left === null ? null : Math.max(1, left);
}

/**
 * Why a run just taken may not start after all, or null: the agent's state and monthly budgets
 * (wakeRefusal), or a budget policy covering the run (company, agent, the issue's project) spent.
 * With the policies, whose remainders cap the run.
 */
export async function startRefusal(
  db: Db,
  run: HeartbeatRunRow,
  agent: AgentRow | undefined,
  company: Budgeted | undefined,
  now: number,
): Promise<{ refusal: string | null; policies: BudgetState[] }> {
  const policies = await policyBudgetsOfRun(db, run, now);
  const spent = spentBudget(policies);
  const refusal = !agent
    ? "agent_missing"
    : (wakeRefusal(agent, company) ?? (spent ? `${spent.scope}_over_budget` : null));
  return { refusal, policies };
}

/** The agent shows `running` while any run of it runs (endRun settles it again). */
export async function markAgentRunning(db: Db, agentId: string, now: number): Promise<void> {
  await db
    .update(agents)
    .set({
      lastHeartbeatAt: now,
      status: sql`CASE WHEN ${agents.status} IN ('idle', 'error') THEN 'running' ELSE ${agents.status} END`,
    })
    .where(eq(agents.id, agentId));
}

/** A key valid only while this run runs: revoked when it finishes, whatever the outcome. */
export async function mintRunKey(db: Db, run: HeartbeatRunRow, now: number): Promise<string> {
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

/** The runner behind a link, unless it was revoked since the link opened. */
const liveRunner = (db: Db, runnerId: string) =>
  db
    .select()
    .from(runners)
    .where(and(eq(runners.id, runnerId), isNull(runners.revokedAt)))
    .get();

/**
 * Claims the next runnable run for a runner's link and prepares everything its process needs. Null
 * when nothing it may take is queued. A run whose agent may no longer run is cancelled with the
 * reason (never started), as is one whose configuration cannot be turned into a process (no command,
 * unknown secret).
 */
export async function claimNextRun(env: Env, db: Db, link: RunnerLink): Promise<RunAssignment | null> {
  const runner = await liveRunner(db, link.runnerId);
  if (!runner) return null;
  for (;;) {
    const now = Date.now();
    const run = await takeOldestForRunner(db, runner, link.linkId, now);
    if (!run) return null;
    const [agent, company] = await Promise.all([
      db.select().from(agents).where(eq(agents.id, run.agentId)).get(),
      db
        .select({
          id: companies.id,
          modelPrices: companies.modelPrices,
          budgetMonthlyCents: companies.budgetMonthlyCents,
          spentMonthlyCents: companies.spentMonthlyCents,
        })
        .from(companies)
        .where(eq(companies.id, run.companyId))
        .get(),
    ]);
    // Budgets are checked again here, when the run would start: spend changes between wake and start.
    const { refusal, policies } = await startRefusal(db, run, agent, company, now);
    if (!agent || refusal) {
      await refuse(env, db, run, refusal ?? "agent_missing", now);
      continue;
    }
    try {
      const assigned = await assignment(env, db, run, agent, link.apiUrl, now);
      const budgetCents = budgetLeft([...rowBudgets(agent, company), ...policies]);
      if (budgetCents !== null) assigned.budgetCents = budgetCents;
      if (company?.modelPrices) assigned.modelPrices = company.modelPrices;
      await announceRun(env, run, "run.started");
      return assigned;
    } catch (error) {
      await endRun(env, db, run, {
        status: "failed",
        errorReason: `configuration: ${String((error as Error).message)}`,
      });
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
  const workspace = await runWorkspace(db, run);
  const key = await mintRunKey(db, run, now);
  await markAgentRunning(db, agent.id, now);
  return {
    runId: run.id,
    agentId: agent.id,
    adapterType: agent.adapterType,
    command: prepared.command,
    args: prepared.args,
    cwd: workspace.cwd ?? prepared.cwd,
    issue: workspace.issue,
    prompt: prepared.prompt,
    timeoutSec: prepared.timeoutSec ?? DEFAULT_TIMEOUT_SEC,
    env: { ...prepared.env, PLATFORM_API_KEY: key },
    adapterConfig: prepared.adapterConfig,
    protocol: prepared.protocol,
    skills: prepared.skills,
    session: await sessionFor(db, run, agent),
    wakePayload: await wakePayload(db, run),
  };
}
