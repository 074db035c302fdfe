import { and, eq, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type BudgetScope, heartbeatRuns } from "../../db/schema";
import { utcMonth } from "../shared";

/**
 * Budget holds: an open hard budget incident (budget_incidents, see budgets/) stops every run in its
 * scope from starting until the board raises the budget. A monthly incident holds only in its own
 * month, so a new month frees the scope even before the scheduled sweep closes the incident.
 */

/** Who a run spends for: its company, its agent, and its issue's project (looked up in SQL). */
export interface HoldTarget {
  companyId: string;
  agentId: string;
  issueId: string | null;
}

/** EXISTS: an open hard incident of `scope` whose scope id is `scopeId` (a value or an SQL expression). */
function heldAt(companyId: string, scope: BudgetScope, scopeId: SQL | string, now: number): SQL {
  return sql`EXISTS (SELECT 1 FROM budget_incidents AS hold WHERE hold.company_id = ${companyId}
    AND hold.status = 'open' AND hold.threshold = 'hard' AND hold.scope_type = ${scope}
    AND hold.scope_id = ${scopeId}
    AND (hold."window" = 'lifetime' OR hold.window_start = ${utcMonth(now).start}))`;
}

/**
 * Why a run for `target` is held, as its error reason (`company_over_budget`, `project_over_budget`,
 * `agent_over_budget`), or NULL: an SQL value, so a wake's INSERT decides it from the incidents as
 * they are then.
 */
export function budgetHoldReason(target: HoldTarget, now: number): SQL<string | null> {
  const project =
    target.issueId === null
      ? sql`FALSE`
      : heldAt(
          target.companyId,
          "project",
          sql`(SELECT held_issue.project_id FROM issues AS held_issue WHERE held_issue.id = ${target.issueId})`,
          now,
        );
  return sql<string | null>`CASE
    WHEN ${heldAt(target.companyId, "company", target.companyId, now)} THEN 'company_over_budget'
    WHEN ${project} THEN 'project_over_budget'
    WHEN ${heldAt(target.companyId, "agent", target.agentId, now)} THEN 'agent_over_budget'
    ELSE NULL END`;
}

/** The runs a budget covers: its company's, its agent's, or those on its project's issues. */
export function runsOfScope(scope: { scope: BudgetScope; scopeId: string; companyId: string }): SQL {
  const company = eq(heartbeatRuns.companyId, scope.companyId);
  if (scope.scope === "company") return company;
  if (scope.scope === "agent") return sql`${company} AND ${eq(heartbeatRuns.agentId, scope.scopeId)}`;
  return sql`${company} AND ${heartbeatRuns.issueId} IN (SELECT scoped.id FROM issues AS scoped WHERE scoped.project_id = ${scope.scopeId})`;
}

/** Queued runs a budget covers, cancelled with the reason (unexecuted, for the caller's batch). */
export const cancelQueuedIn = (
  db: Db,
  scope: { scope: BudgetScope; scopeId: string; companyId: string },
  reason: string,
  now: number,
) =>
  db
    .update(heartbeatRuns)
    .set({ status: "cancelled", errorReason: reason, finishedAt: now })
    .where(and(runsOfScope(scope), eq(heartbeatRuns.status, "queued")));
