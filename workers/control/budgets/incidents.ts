import { and, desc, eq, inArray, lt, type SQL } from "drizzle-orm";
import type { ActorRef } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import {
  type BudgetIncidentRow,
  type BudgetThreshold,
  budgetIncidents,
  budgetPolicies,
} from "../../db/schema";
import { activityInsert } from "../shared";
import type { BudgetState } from "./store";
import { SOFT_THRESHOLD_PERCENT, softThreshold, windowStart } from "./windows";

/**
 * Budget incidents: the record that a budget's spend reached its soft (80 %) or hard (100 %)
 * threshold. One per crossing (the unique index on scope, window, window start, threshold and
 * amount), so evaluating the same spend again, after a retry or a second event, opens nothing new;
 * a raised budget crossed again is a new incident. An open hard incident holds its scope (no run
 * starts, wakes/holds.ts) until it is resolved.
 */

/** The threshold a budget's spend has reached, or null below the soft one (or without a budget). */
export function thresholdReached(
  budget: Pick<BudgetState, "amountCents" | "spentCents">,
): BudgetThreshold | null {
  if (budget.amountCents <= 0) return null;
  if (budget.spentCents >= budget.amountCents) return "hard";
  return budget.spentCents >= softThreshold(budget.amountCents) ? "soft" : null;
}

/** The incident a budget at `threshold` opens (the row, before the insert that may find it there). */
function incidentRow(
  companyId: string,
  budget: BudgetState,
  threshold: BudgetThreshold,
  costEventId: string | null,
  now: number,
): BudgetIncidentRow {
  return {
    id: newId(),
    companyId,
    scopeType: budget.scope,
    scopeId: budget.scopeId,
    window: budget.window,
    windowStart: windowStart(budget.window, now),
    threshold,
    amountCents: budget.amountCents,
    spentCents: budget.spentCents,
    costEventId,
    status: "open",
    resolution: null,
    resolvedByUserId: null,
    resolvedAt: null,
    createdAt: now,
  };
}

/** Open incidents of the same budget and window (a soft one, superseded when the hard one opens). */
const sameBudget = (incident: BudgetIncidentRow): SQL | undefined =>
  and(
    eq(budgetIncidents.companyId, incident.companyId),
    eq(budgetIncidents.scopeType, incident.scopeType),
    eq(budgetIncidents.scopeId, incident.scopeId),
    eq(budgetIncidents.window, incident.window),
    eq(budgetIncidents.windowStart, incident.windowStart),
    eq(budgetIncidents.status, "open"),
  );

/**
 * Opens the incidents `budgets` have reached (each at most once, see above) and returns those this
 * call opened. Each writes an activity row (`budget.warning` for soft, `budget.exceeded` for hard,
 * on the scope's entity); a hard one closes the same window's soft one (escalated).
 */
export async function openIncidents(
  db: Db,
  companyId: string,
  budgets: readonly BudgetState[],
  cause: { costEventId: string | null; actor: ActorRef },
  now: number,
): Promise<BudgetIncidentRow[]> {
  const [first, ...rest] = budgets.flatMap((budget) => {
    const threshold = thresholdReached(budget);
    if (!threshold) return [];
    const row = incidentRow(companyId, budget, threshold, cause.costEventId, now);
    return [db.insert(budgetIncidents).values(row).onConflictDoNothing().returning()];
  });
  if (!first) return [];
  const opened = (await db.batch([first, ...rest])).flat();
  const [write, ...writes] = opened.flatMap((incident) => [
    ...(incident.threshold === "hard"
      ? [
          db
            .update(budgetIncidents)
            .set({ status: "resolved", resolution: "escalated", resolvedAt: now })
            .where(and(sameBudget(incident), eq(budgetIncidents.threshold, "soft"))),
        ]
      : []),
    activityInsert(
      db,
      {
        companyId,
        actor: cause.actor,
        action: incident.threshold === "hard" ? "budget.exceeded" : "budget.warning",
        entityType: incident.scopeType,
        entityId: incident.scopeId,
        details: {
          incidentId: incident.id,
          budget: incident.scopeType,
          window: incident.window,
          thresholdPercent: incident.threshold === "hard" ? 100 : SOFT_THRESHOLD_PERCENT,
          spentCents: incident.spentCents,
          amountCents: incident.amountCents,
          costEventId: incident.costEventId,
        },
      },
      now,
    ),
  ]);
  if (write) await db.batch([write, ...writes]);
  return opened;
}

/** A company's incidents, newest first; `status` narrows to open or resolved. */
export function listIncidents(db: Db, companyId: string, status?: "open" | "resolved") {
  return db
    .select()
    .from(budgetIncidents)
    .where(
      and(
        eq(budgetIncidents.companyId, companyId),
        status === undefined ? undefined : eq(budgetIncidents.status, status),
      ),
    )
    .orderBy(desc(budgetIncidents.createdAt), desc(budgetIncidents.id))
    .limit(500)
    .all();
}

/** The thresholds a budget's spend no longer reaches at its (new) amount: their incidents close. */
export function thresholdsLeft(budget: Pick<BudgetState, "amountCents" | "spentCents">): BudgetThreshold[] {
  const reached = thresholdReached(budget);
  return reached === "hard" ? [] : reached === "soft" ? ["hard"] : ["soft", "hard"];
}

/**
 * Closes a budget's open incidents at `thresholds` with `resolution` (the budget was raised above its
 * spend, or removed), whatever their window: unexecuted, for the caller's batch.
 */
export function closeIncidentsOf(
  db: Db,
  budget: Pick<BudgetState, "scope" | "scopeId" | "window"> & { companyId: string },
  resolution: "raised" | "removed",
  userId: string | null,
  now: number,
  thresholds: readonly BudgetThreshold[],
) {
  return db
    .update(budgetIncidents)
    .set({ status: "resolved", resolution, resolvedByUserId: userId, resolvedAt: now })
    .where(
      and(
        eq(budgetIncidents.companyId, budget.companyId),
        eq(budgetIncidents.scopeType, budget.scope),
        eq(budgetIncidents.scopeId, budget.scopeId),
        eq(budgetIncidents.window, budget.window),
        eq(budgetIncidents.status, "open"),
        inArray(budgetIncidents.threshold, [...thresholds]),
      ),
    )
    .returning();
}

/**
 * Monthly incidents of months that have ended, resolved (window_ended): they hold nothing already
 * (wakes/holds.ts counts only the current month's), this closes them so the open list is true.
 */
export const closeEndedWindows = (db: Db, now: number) =>
  db
    .update(budgetIncidents)
    .set({ status: "resolved", resolution: "window_ended", resolvedAt: now })
    .where(
      and(
        eq(budgetIncidents.status, "open"),
        eq(budgetIncidents.window, "month"),
        lt(budgetIncidents.windowStart, windowStart("month", now)),
      ),
    );

/**
 * A budget's amount changed (to `amountCents`, 0 = removed): its open incidents the new amount no
 * longer reaches close (`raised`, or `removed`), freeing what they held. Unexecuted, for the batch
 * that changes the amount (setBudget, and PATCH of an agent's or company's budgetMonthlyCents).
 */
export function settleIncidents(
  db: Db,
  key: Pick<BudgetState, "scope" | "scopeId" | "window"> & { companyId: string },
  amounts: { amountCents: number; spentCents: number },
  userId: string | null,
  now: number,
) {
  const removed = amounts.amountCents === 0;
  const closing: BudgetThreshold[] = removed ? ["soft", "hard"] : thresholdsLeft(amounts);
  return closeIncidentsOf(db, key, removed ? "removed" : "raised", userId, now, closing);
}

/**
 * A project or agent deleted: its budgets go, its open incidents close (`removed`), nothing being
 * left to hold. Unexecuted, for the deleting batch.
 */
export const budgetsRemoved = (db: Db, scope: "project" | "agent", scopeId: string, now: number) =>
  [
    db
      .delete(budgetPolicies)
      .where(and(eq(budgetPolicies.scopeType, scope), eq(budgetPolicies.scopeId, scopeId))),
    db
      .update(budgetIncidents)
      .set({ status: "resolved", resolution: "removed", resolvedAt: now })
      .where(
        and(
          eq(budgetIncidents.scopeType, scope),
          eq(budgetIncidents.scopeId, scopeId),
          eq(budgetIncidents.status, "open"),
        ),
      ),
  ] as const;
