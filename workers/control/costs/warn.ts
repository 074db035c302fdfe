import type { ActorRef } from "../../core/actor";
import type { Db } from "../../db/client";
import { activityInsert } from "../shared";
import type { Budgeted } from "../wakes";

/** The soft threshold: the share of a monthly budget at which the board is warned, before the stop. */
export const SOFT_THRESHOLD_PERCENT = 80;

/**
 * True when the event of `costCents` is the one that took the spend across the soft threshold (and
 * not yet to the budget, where the hard stop speaks instead): the warning is raised once per crossing,
 * not on every later event of the month.
 */
export function crossedSoftThreshold(row: Budgeted, costCents: number): boolean {
  if (row.budgetMonthlyCents <= 0 || row.spentMonthlyCents >= row.budgetMonthlyCents) return false;
  const threshold = (row.budgetMonthlyCents * SOFT_THRESHOLD_PERCENT) / 100;
  return row.spentMonthlyCents >= threshold && row.spentMonthlyCents - costCents < threshold;
}

/**
 * The `budget.warning` activity rows (agent and/or company) for an event that crossed a soft
 * threshold; the activity feed and its live events carry them to the board.
 */
export async function warnNearBudget(
  db: Db,
  event: { companyId: string; agentId: string; id: string; costCents: number },
  over: { agent: Budgeted | undefined; company: Budgeted | undefined },
  actor: ActorRef,
  now: number,
): Promise<void> {
  const scopes = [
    { scope: "agent", entityId: event.agentId, row: over.agent },
    { scope: "company", entityId: event.companyId, row: over.company },
  ] as const;
  const inserts = scopes
    .filter(({ row }) => row && crossedSoftThreshold(row, event.costCents))
    .map(({ scope, entityId, row }) =>
      activityInsert(
        db,
        {
          companyId: event.companyId,
          actor,
          action: "budget.warning",
          entityType: scope,
          entityId,
          details: {
            budget: scope,
            thresholdPercent: SOFT_THRESHOLD_PERCENT,
            spentMonthlyCents: row?.spentMonthlyCents ?? 0,
            budgetMonthlyCents: row?.budgetMonthlyCents ?? 0,
            costEventId: event.id,
          },
        },
        now,
      ),
    );
  const [first, ...rest] = inserts;
  if (first) await db.batch([first, ...rest]);
}
