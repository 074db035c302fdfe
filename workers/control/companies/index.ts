/**
 * Companies: create and edit, the dashboard summary, the logo, labels, and the reference checks
 * other domains use. HTTP in routes.ts and labels.ts.
 *
 * This index is what the rest of the code may import from here.
 */
export { assertCompanyAgent, assertCompanyGoals, companyGoal } from "./refs";
export { type ActivitySchema, CompanyParamSchema, type CompanySchema, type DashboardSchema } from "./schemas";
export { basePrefix, firstFreePrefix } from "./store";
