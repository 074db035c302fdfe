import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { agents, type GoalRow, goals } from "../../db/schema";
import { unprocessable } from "../../http/errors";

/**
 * Checks of ids that a body names (goalIds, ownerAgentId, parentId, …). An id of another company is a
 * broken reference like an unknown one: 422 naming the field, without saying whether the id exists.
 */

export async function assertCompanyAgent(db: Db, companyId: string, agentId: string, field: string) {
  const agent = await db
    .select({ id: agents.id })
    .from(agents)
    .where(and(eq(agents.id, agentId), eq(agents.companyId, companyId)))
    .get();
  if (!agent) throw unprocessable(`${field} must be an agent of this company`);
}

export async function companyGoal(
  db: Db,
  companyId: string,
  goalId: string,
  field: string,
): Promise<GoalRow> {
  const goal = await db
    .select()
    .from(goals)
    .where(and(eq(goals.id, goalId), eq(goals.companyId, companyId)))
    .get();
  if (!goal) throw unprocessable(`${field} must be a goal of this company`);
  return goal;
}

export async function assertCompanyGoals(db: Db, companyId: string, goalIds: readonly string[]) {
  if (goalIds.length === 0) return;
  const found = await db
    .select({ id: goals.id })
    .from(goals)
    .where(and(inArray(goals.id, [...goalIds]), eq(goals.companyId, companyId)));
  const known = new Set(found.map((row) => row.id));
  const missing = goalIds.filter((id) => !known.has(id));
  if (missing.length > 0) {
    throw unprocessable("goalIds must be goals of this company", { goalIds: missing });
  }
}
