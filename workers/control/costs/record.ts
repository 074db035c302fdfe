import { agentCredentialsChanged } from "../../auth/agent-key-store";
import { type ActorRef, authorColumns } from "../../core/actor";
import type { Env } from "../../core/env";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { type CostEventRow, costEvents } from "../../db/schema";
import { activityInsert } from "../shared";
import { pauseOverBudget, recomputeSpend } from "./store";

/** A cost event whose ids have been checked to belong to `companyId` (see checkCostRefs). */
export type CostEventInput = Omit<CostEventRow, "id" | "createdByUserId" | "createdByAgentId" | "createdAt">;

/**
 * Records one cost event: the insert, the agent's and company's monthly spend recomputed and the
 * activity row in one batch; then the budget stop (pause + queued runs cancelled) if the agent has
 * reached its budget. Shared by POST /cost-events and the runner's finish report, so a run's cost
 * counts against the budget the moment it is known.
 */
export async function recordCostEvent(
  env: Env,
  db: Db,
  input: CostEventInput,
  actor: ActorRef,
  now = Date.now(),
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
  const [, [agent]] = await db.batch([
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
  if (agent && (await pauseOverBudget(db, agent, actor, row.id, now)))
    await agentCredentialsChanged(env, agent.id);
  return row;
}
