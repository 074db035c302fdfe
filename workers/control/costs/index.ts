/**
 * Cost events, monthly spend and budgets (an agent over budget is paused). HTTP in routes.ts.
 *
 * This index is what the rest of the code may import from here.
 */
export { recordCostEvent } from "./record";
export type {
  AgentCostSchema,
  CostSummarySchema,
  ModelCostSchema,
  ProjectCostSchema,
  ProviderCostSchema,
} from "./schemas";
export { recomputeAllSpend } from "./store";
