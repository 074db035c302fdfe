/**
 * Budgets: every budget a company sets (its own, its projects', its agents'; monthly or lifetime),
 * the incidents they raise at their soft and hard thresholds, and the holds and stops that make a
 * hard threshold hold. Below costs (which records the events that spend) and runs (which claim).
 *
 * This index is what the rest of the code may import from here.
 */
export { type BudgetCause, holdOverBudget } from "./enforce";
export { budgetsRemoved, closeEndedWindows, settleIncidents } from "./incidents";
export type { BudgetSchema, IncidentSchema } from "./schemas";
export { stopRunsOverBudget } from "./stop";
export {
  type BudgetState,
  companyBudgets,
  isRowBudget,
  type NamedBudget,
  policyBudgetsFor,
  policyBudgetsOfRun,
  rowBudgets,
  type SpendTarget,
  smallestRemainder,
  spentBudget,
} from "./store";
export { SOFT_THRESHOLD_PERCENT, utcMonth, windowStart } from "./windows";
