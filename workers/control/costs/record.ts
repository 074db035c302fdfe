import { agentCredentialsChanged } from "../../auth/agent-key-store";
import { type ActorRef, authorColumns } from "../../core/actor";
import type { Env } from "../../core/env";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { type CostEventRow, costEvents } from "../../db/schema";
import { holdOverBudget, policyBudgetsFor, rowBudgets, stopRunsOverBudget } from "../budgets";
import { announceLater, queueAgentBudgetNotices, queueCompanyBudgetNotices } from "../line";
import { activityInsert } from "../shared";
import { budgetSpent, cancelQueuedCompanyRuns } from "../wakes";
import { pauseOverBudget, recomputeSpend } from "./store";

/** A cost event whose ids have been checked to belong to `companyId` (see checkCostRefs). */
export type CostEventInput = Omit<CostEventRow, "id" | "createdByUserId" | "createdByAgentId" | "createdAt">;

/**
 * Records one cost event: the insert, the agent's and company's monthly spend recomputed and the
 * activity row in one batch; then every budget the event spends from is evaluated (budgets/): the
 * incidents it reached opened (budget.warning at 80 %, budget.exceeded at 100 %), a project's or
 * lifetime budget's hard stop enforced; then the monthly budget stop if the agent or its company has
 * reached its budget: the agent paused and its queued runs cancelled (agent budget), the company's
 * queued runs cancelled (company budget), and the running runs either covers asked to stop. Shared by
 * POST /cost-events and the runner's finish report, so a run's cost counts against the budget the
 * moment it is known.
 */
export async function recordCostEvent(
  env: Env,
  db: Db,
  input: CostEventInput,
  actor: ActorRef,
  now = Date.now(),
  /** The run whose finish this event charges: it is over, so it is not one to stop. */
  finishing: string | null = null,
): Promise<CostEventRow> {
  const author = authorColumns(actor);
  const row: CostEventRow = {
    ...input,
    id: newId(),
    createdByUserId: author.userId,
    createdByAgentId: author.agentId,
    createdAt: now,
  };
  const [agentSpend, companySpend] = recomputeSpend(db, row.companyId, row.agentId, now);
  const [, [agent], [company]] = await db.batch([
    db.insert(costEvents).values(row),
    agentSpend,
    companySpend,
    activityInsert(
      db,
      {
        companyId: row.companyId,
        actor,
        action: "cost.reported",
        entityType: "cost_event",
        entityId: row.id,
        details: { agentId: row.agentId, costCents: row.costCents, provider: row.provider, model: row.model },
      },
      now,
    ),
  ]);
  const target = { companyId: row.companyId, agentId: row.agentId, projectId: row.projectId };
  const budgets = [...rowBudgets(agent, company), ...(await policyBudgetsFor(db, target, now))];
  await holdOverBudget(env, db, row.companyId, budgets, { costEventId: row.id, actor, finishing }, now);
  if (agent && (await pauseOverBudget(db, agent, actor, row.id, now))) {
    await agentCredentialsChanged(env, agent.id);
    // The owners hear of it on the company's line; whoever has a request at hand sends it at once.
    await announceLater(env, row.companyId, (tx, origin, at) =>
      queueAgentBudgetNotices(tx, agent, row.id, origin, at),
    );
  }
  if (company && budgetSpent(company)) {
    await cancelQueuedCompanyRuns(db, row.companyId, "company_over_budget", now).run();
    await announceLater(env, row.companyId, (tx, origin, at) =>
      queueCompanyBudgetNotices(tx, row.companyId, origin, at),
    );
  }
  await stopRunsOverBudget(env, db, row, { agent, company, finishing }, actor, now);
  return row;
}
