import { and, eq, gte, inArray, lt, ne, type SQL, sql } from "drizzle-orm";
import type { ActorRef } from "../../core/actor";
import type { Db } from "../../db/client";
import {
  type AgentRow,
  type AgentStatus,
  agents,
  companies,
  costEvents,
  heartbeatRuns,
  issues,
  projects,
} from "../../db/schema";
import { unprocessable } from "../../http/errors";
import { utcMonth } from "../budgets";
import { activityInsert } from "../shared";
import { cancelQueuedRuns } from "../wakes";

export interface CostRefs {
  agentId: string;
  issueId?: string | null;
  projectId?: string | null;
  heartbeatRunId?: string | null;
}

/**
 * The ids a cost event names must belong to the company (422 naming the field, whether the id is
 * unknown or another company's). An event with an issue but no project is charged to the issue's
 * project, so by-project totals include work reported against issues.
 */
export async function checkCostRefs(
  db: Db,
  companyId: string,
  refs: CostRefs,
): Promise<{ agent: AgentRow; projectId: string | null }> {
  const [agent, issue, project, run] = await Promise.all([
    db
      .select()
      .from(agents)
      .where(and(eq(agents.id, refs.agentId), eq(agents.companyId, companyId)))
      .get(),
    refs.issueId
      ? db
          .select({ projectId: issues.projectId })
          .from(issues)
          .where(and(eq(issues.id, refs.issueId), eq(issues.companyId, companyId)))
          .get()
      : undefined,
    refs.projectId
      ? db
          .select({ id: projects.id })
          .from(projects)
          .where(and(eq(projects.id, refs.projectId), eq(projects.companyId, companyId)))
          .get()
      : undefined,
    refs.heartbeatRunId
      ? db
          .select({ agentId: heartbeatRuns.agentId })
          .from(heartbeatRuns)
          .where(and(eq(heartbeatRuns.id, refs.heartbeatRunId), eq(heartbeatRuns.companyId, companyId)))
          .get()
      : undefined,
  ]);
  if (!agent) throw unprocessable("agentId must be an agent of this company");
  if (refs.issueId && !issue) throw unprocessable("issueId must be an issue of this company");
  if (refs.projectId && !project) throw unprocessable("projectId must be a project of this company");
  if (refs.heartbeatRunId && run?.agentId !== agent.id)
    throw unprocessable("heartbeatRunId must be a heartbeat run of this agent");
  return { agent, projectId: refs.projectId ?? issue?.projectId ?? null };
}

/**
 * `(SELECT sum(cost_cents) …)` over this month's events matching `scope`: a correlated value for an
 * UPDATE, so the stored spend is recomputed from the events (idempotent, never drifts) rather than
 * incremented.
 */
function monthSpend(db: Db, scope: SQL, now: number) {
  const { start, end } = utcMonth(now);
  const total = db
    .select({ total: sql<number>`coalesce(sum(${costEvents.costCents}), 0)` })
    .from(costEvents)
    .where(and(scope, gte(costEvents.occurredAt, start), lt(costEvents.occurredAt, end)));
  return sql<number>`(${total})`;
}

/** The agent's and the company's monthly spend, recomputed; unexecuted, for the insert's batch. */
export function recomputeSpend(db: Db, companyId: string, agentId: string, now: number) {
  return [
    db
      .update(agents)
      .set({ spentMonthlyCents: monthSpend(db, eq(costEvents.agentId, agentId), now) })
      .where(eq(agents.id, agentId))
      .returning(),
    db
      .update(companies)
      .set({ spentMonthlyCents: monthSpend(db, eq(costEvents.companyId, companyId), now) })
      .where(eq(companies.id, companyId))
      .returning({
        id: companies.id,
        spentMonthlyCents: companies.spentMonthlyCents,
        budgetMonthlyCents: companies.budgetMonthlyCents,
      }),
  ] as const;
}

/**
 * Every agent's and company's monthly spend, recomputed. Spend is otherwise recomputed only when a
 * cost event arrives, so after a month rollover the stored figure would keep last month's total (and
 * keep refusing wakes as over budget) until the next event: the scheduled handler calls this. Only
 * rows whose figure changes are written.
 */
export async function recomputeAllSpend(db: Db, now = Date.now()): Promise<void> {
  const agentSpend = monthSpend(db, eq(costEvents.agentId, agents.id), now);
  const companySpend = monthSpend(db, eq(costEvents.companyId, companies.id), now);
  await db.batch([
    db.update(agents).set({ spentMonthlyCents: agentSpend }).where(ne(agents.spentMonthlyCents, agentSpend)),
    db
      .update(companies)
      .set({ spentMonthlyCents: companySpend })
      .where(ne(companies.spentMonthlyCents, companySpend)),
  ]);
}

/** The statuses the budget stop applies to; pending, paused and terminated agents stay as they are. */
const PAUSABLE: AgentStatus[] = ["idle", "running", "error"];

export const isOverBudget = (agent: AgentRow): boolean =>
  agent.budgetMonthlyCents > 0 && agent.spentMonthlyCents >= agent.budgetMonthlyCents;

/**
 * The hard stop: an agent whose monthly spend reached its budget is paused (reason budget) and its
 * queued runs are cancelled, so no further run starts. Conditional on the status, so a repeat (or a
 * race with a manual pause) changes nothing. Returns whether the agent was paused.
 */
export async function pauseOverBudget(
  db: Db,
  agent: AgentRow,
  actor: ActorRef,
  costEventId: string,
  now: number,
): Promise<boolean> {
  if (!isOverBudget(agent) || !PAUSABLE.includes(agent.status)) return false;
  const [paused] = await db.batch([
    db
      .update(agents)
      .set({ status: "paused", pauseReason: "budget", updatedAt: now })
      .where(and(eq(agents.id, agent.id), inArray(agents.status, PAUSABLE)))
      .returning({ id: agents.id }),
    cancelQueuedRuns(db, agent.id, "agent_over_budget", now),
    activityInsert(
      db,
      {
        companyId: agent.companyId,
        actor,
        action: "agent.budget_paused",
        entityType: "agent",
        entityId: agent.id,
        details: {
          from: agent.status,
          pauseReason: "budget",
          spentMonthlyCents: agent.spentMonthlyCents,
          budgetMonthlyCents: agent.budgetMonthlyCents,
          costEventId,
        },
      },
      now,
    ),
  ]);
  return paused.length > 0;
}

export interface CostRange {
  start: number;
  end: number;
}

const usageColumns = {
  costCents: sql<number>`coalesce(sum(${costEvents.costCents}), 0)`,
  inputTokens: sql<number>`coalesce(sum(${costEvents.inputTokens}), 0)`,
  cachedInputTokens: sql<number>`coalesce(sum(${costEvents.cachedInputTokens}), 0)`,
  outputTokens: sql<number>`coalesce(sum(${costEvents.outputTokens}), 0)`,
  eventCount: sql<number>`count(*)`,
};

const byCostDesc = sql`sum(${costEvents.costCents}) DESC`;

const inRange = (companyId: string, range: CostRange) =>
  and(
    eq(costEvents.companyId, companyId),
    gte(costEvents.occurredAt, range.start),
    lt(costEvents.occurredAt, range.end),
  );

export async function companySpend(db: Db, companyId: string, range: CostRange): Promise<number> {
  const row = await db
    .select({ total: usageColumns.costCents })
    .from(costEvents)
    .where(inRange(companyId, range))
    .get();
  return row?.total ?? 0;
}

/** Agents with events in the range, most expensive first. */
export function costsByAgent(db: Db, companyId: string, range: CostRange) {
  return db
    .select({
      agentId: agents.id,
      agentName: agents.name,
      agentStatus: agents.status,
      ...usageColumns,
    })
    .from(costEvents)
    .innerJoin(agents, eq(agents.id, costEvents.agentId))
    .where(inRange(companyId, range))
    .groupBy(agents.id)
    .orderBy(byCostDesc, agents.name);
}

/** Projects with events in the range, most expensive first; events without a project form one null row. */
export function costsByProject(db: Db, companyId: string, range: CostRange) {
  return db
    .select({ projectId: costEvents.projectId, projectName: projects.name, ...usageColumns })
    .from(costEvents)
    .leftJoin(projects, eq(projects.id, costEvents.projectId))
    .where(inRange(companyId, range))
    .groupBy(costEvents.projectId)
    .orderBy(byCostDesc, projects.name);
}

/** Provider and model pairs with events in the range, most expensive first (a model-less event: model null). */
export function costsByModel(db: Db, companyId: string, range: CostRange) {
  return db
    .select({ provider: costEvents.provider, model: costEvents.model, ...usageColumns })
    .from(costEvents)
    .where(inRange(companyId, range))
    .groupBy(costEvents.provider, costEvents.model)
    .orderBy(byCostDesc, costEvents.provider, costEvents.model);
}

/** Providers with events in the range, most expensive first. */
export function costsByProvider(db: Db, companyId: string, range: CostRange) {
  return db
    .select({ provider: costEvents.provider, ...usageColumns })
    .from(costEvents)
    .where(inRange(companyId, range))
    .groupBy(costEvents.provider)
    .orderBy(byCostDesc, costEvents.provider);
}
