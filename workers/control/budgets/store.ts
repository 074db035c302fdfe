import { and, eq, gte, lt, or, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import {
  type AgentRow,
  agents,
  type BudgetPolicyRow,
  type BudgetScope,
  type BudgetWindow,
  budgetPolicies,
  companies,
  costEvents,
  projects,
} from "../../db/schema";
import { utcMonth } from "./windows";

/**
 * One budget and what was spent in its current window. Agent and company monthly budgets live on
 * their rows (budgetMonthlyCents, with the spend recomputed on every cost event); every other budget
 * (a project's, a lifetime one) is a budget_policies row whose spend is summed from the cost events.
 */
export interface BudgetState {
  scope: BudgetScope;
  scopeId: string;
  window: BudgetWindow;
  amountCents: number;
  spentCents: number;
  /** The policy row's id; null for a monthly budget kept on the agent's or company's row. */
  policyId: string | null;
}

/** A budget stored on a row: agent or company budgetMonthlyCents (0 = none). */
export const isRowBudget = (budget: Pick<BudgetState, "scope" | "window">): boolean =>
  budget.window === "month" && budget.scope !== "project";

/** The cost events a budget counts: its scope's, in its window. */
function spendScope(
  companyId: string,
  scope: BudgetScope,
  scopeId: string,
  window: BudgetWindow,
  now: number,
) {
  const conditions: SQL[] = [eq(costEvents.companyId, companyId)];
  if (scope === "agent") conditions.push(eq(costEvents.agentId, scopeId));
  if (scope === "project") conditions.push(eq(costEvents.projectId, scopeId));
  if (window === "month") {
    const { start, end } = utcMonth(now);
    conditions.push(gte(costEvents.occurredAt, start), lt(costEvents.occurredAt, end));
  }
  return and(...conditions);
}

/** One budget: what it covers and its window. */
export interface BudgetKey {
  companyId: string;
  scope: BudgetScope;
  scopeId: string;
  window: BudgetWindow;
}

/** The sum of the cost events a budget counts, in its current window. */
export const spendQuery = (db: Db, key: BudgetKey, now: number) =>
  db
    .select({ total: sql<number>`coalesce(sum(${costEvents.costCents}), 0)` })
    .from(costEvents)
    .where(spendScope(key.companyId, key.scope, key.scopeId, key.window, now));

/** Policies with their spend: one round trip for all the sums. */
async function withSpend(db: Db, policies: BudgetPolicyRow[], now: number): Promise<BudgetState[]> {
  const [first, ...rest] = policies.map((policy) =>
    spendQuery(db, { ...policy, scope: policy.scopeType }, now),
  );
  if (!first) return [];
  const totals = await db.batch([first, ...rest]);
  return policies.map((policy, index) => ({
    scope: policy.scopeType,
    scopeId: policy.scopeId,
    window: policy.window,
    amountCents: policy.amountCents,
    spentCents: totals[index]?.[0]?.total ?? 0,
    policyId: policy.id,
  }));
}

/** What a run or a cost event spends from: the company, the agent and (when there is one) the project. */
export interface SpendTarget {
  companyId: string;
  agentId: string;
  projectId: string | null;
}

/**
 * The policies covering a target, with their spend now. `projectId` may be an SQL value (a run's
 * issue's project, looked up in the same statement).
 */
export async function policyBudgetsFor(
  db: Db,
  target: { companyId: string; agentId: string; projectId: string | SQL | null },
  now: number,
): Promise<BudgetState[]> {
  const covers = or(
    eq(budgetPolicies.scopeType, "company"),
    and(eq(budgetPolicies.scopeType, "agent"), eq(budgetPolicies.scopeId, target.agentId)),
    target.projectId === null
      ? undefined
      : and(eq(budgetPolicies.scopeType, "project"), sql`${budgetPolicies.scopeId} = ${target.projectId}`),
  );
  const policies = await db
    .select()
    .from(budgetPolicies)
    .where(and(eq(budgetPolicies.companyId, target.companyId), covers))
    .all();
  return withSpend(db, policies, now);
}

/** The policies a run spends from: its company's, its agent's and its issue's project's. */
export const policyBudgetsOfRun = (
  db: Db,
  run: { companyId: string; agentId: string; issueId: string | null },
  now: number,
) =>
  policyBudgetsFor(
    db,
    {
      ...run,
      projectId:
        run.issueId === null
          ? null
          : sql`(SELECT run_issue.project_id FROM issues AS run_issue WHERE run_issue.id = ${run.issueId})`,
    },
    now,
  );

/** The first budget at or over its amount, if any. */
export const spentBudget = (budgets: readonly BudgetState[]): BudgetState | undefined =>
  budgets.find((budget) => budget.amountCents > 0 && budget.spentCents >= budget.amountCents);

/** What is left of the smallest remainder among `budgets` (those set), or null when none is set. */
export function smallestRemainder(budgets: readonly BudgetState[]): number | null {
  const left = budgets
    .filter((budget) => budget.amountCents > 0)
    .map((budget) => budget.amountCents - budget.spentCents);
  return left.length === 0 ? null : Math.min(...left);
}

/** The monthly budgets kept on the agent's and company's rows, as states (those set, > 0). */
export function rowBudgets(
  agent: Pick<AgentRow, "id" | "budgetMonthlyCents" | "spentMonthlyCents"> | undefined,
  company: { id: string; budgetMonthlyCents: number; spentMonthlyCents: number } | undefined,
): BudgetState[] {
  const states: BudgetState[] = [];
  if (agent && agent.budgetMonthlyCents > 0)
    states.push({
      scope: "agent",
      scopeId: agent.id,
      window: "month",
      amountCents: agent.budgetMonthlyCents,
      spentCents: agent.spentMonthlyCents,
      policyId: null,
    });
  if (company && company.budgetMonthlyCents > 0)
    states.push({
      scope: "company",
      scopeId: company.id,
      window: "month",
      amountCents: company.budgetMonthlyCents,
      spentCents: company.spentMonthlyCents,
      policyId: null,
    });
  return states;
}

/** A budget as listed: its state and the name of what it covers. */
export type NamedBudget = BudgetState & { scopeName: string };

/**
 * Every budget of the company with its spend: the company's and its agents' monthly budgets (from
 * their rows) and every policy. Company first, then projects, then agents, by name.
 */
export async function companyBudgets(db: Db, companyId: string, now: number): Promise<NamedBudget[]> {
  const [company, agentRows, projectRows, policies] = await db.batch([
    db
      .select({
        id: companies.id,
        name: companies.name,
        budgetMonthlyCents: companies.budgetMonthlyCents,
        spentMonthlyCents: companies.spentMonthlyCents,
      })
      .from(companies)
      .where(eq(companies.id, companyId)),
    db
      .select({
        id: agents.id,
        name: agents.name,
        budgetMonthlyCents: agents.budgetMonthlyCents,
        spentMonthlyCents: agents.spentMonthlyCents,
      })
      .from(agents)
      .where(eq(agents.companyId, companyId)),
    db
      .select({ id: projects.id, name: projects.name })
      .from(projects)
      .where(eq(projects.companyId, companyId)),
    db.select().from(budgetPolicies).where(eq(budgetPolicies.companyId, companyId)),
  ]);
  const names = new Map<string, string>([
    ...company.map((row) => [row.id, row.name] as const),
    ...agentRows.map((row) => [row.id, row.name] as const),
    ...projectRows.map((row) => [row.id, row.name] as const),
  ]);
  const states = [
    ...rowBudgets(undefined, company[0]),
    ...(await withSpend(db, policies, now)),
    ...agentRows.flatMap((agent) => rowBudgets(agent, undefined)),
  ];
  const order: Record<BudgetScope, number> = { company: 0, project: 1, agent: 2 };
  return states
    .map((state) => ({ ...state, scopeName: names.get(state.scopeId) ?? state.scopeId }))
    .sort(
      (a, b) =>
        order[a.scope] - order[b.scope] ||
        a.scopeName.localeCompare(b.scopeName) ||
        a.window.localeCompare(b.window),
    );
}
