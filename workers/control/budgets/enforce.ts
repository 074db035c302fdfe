import type { ActorRef } from "../../core/actor";
import type { Env } from "../../core/env";
import type { Db } from "../../db/client";
import type { BudgetIncidentRow } from "../../db/schema";
import { announceLater, queueBudgetIncidentNotices } from "../line";
import { cancelQueuedIn, runsOfScope } from "../wakes";
import { openIncidents } from "./incidents";
import { stopRunsIn } from "./stop";
import { type BudgetState, isRowBudget } from "./store";

/** Why an incident's evaluation happened: the cost event (null: the board lowered the budget), who, and the run it charges. */
export interface BudgetCause {
  costEventId: string | null;
  actor: ActorRef;
  /** The run whose finish the event charges: it is over, so it is not one to stop. */
  finishing: string | null;
}

/**
 * Opens the incidents `budgets` have reached and enforces each new hard one of a policy budget (a
 * project's, a lifetime one): the scope's queued runs cancelled (`<scope>_over_budget`), its running
 * runs asked to stop (budget_exceeded). The owners are told on the company's line of every warning and
 * of those stops. The monthly budgets
 * on the agent's and company's rows are enforced where they are recomputed (costs/record.ts: the
 * agent paused, the company's runs cancelled); their incidents are opened here all the same.
 * Returns the incidents this call opened.
 */
export async function holdOverBudget(
  env: Env,
  db: Db,
  companyId: string,
  budgets: readonly BudgetState[],
  cause: BudgetCause,
  now: number,
): Promise<BudgetIncidentRow[]> {
  const opened = await openIncidents(db, companyId, budgets, cause, now);
  for (const incident of opened) {
    const budget = {
      scope: incident.scopeType,
      scopeId: incident.scopeId,
      companyId,
      window: incident.window,
    };
    const rowStop = incident.threshold === "hard" && isRowBudget(budget);
    // A monthly row budget's stop has its own notice (costs/record.ts); every other incident is told here.
    if (!rowStop)
      await announceLater(env, companyId, (tx, origin, at) =>
        queueBudgetIncidentNotices(tx, incident, origin, at),
      );
    if (incident.threshold !== "hard" || rowStop) continue;
    await cancelQueuedIn(db, budget, `${incident.scopeType}_over_budget`, now).run();
    await stopRunsIn(
      env,
      db,
      runsOfScope(budget),
      {
        budget: incident.scopeType,
        costEventId: cause.costEventId,
        finishing: cause.finishing,
        incidentId: incident.id,
      },
      cause.actor,
      now,
    );
  }
  return opened;
}
