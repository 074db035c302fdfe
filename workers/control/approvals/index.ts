/**
 * Approvals: requests for a board decision (a hire, the CEO's strategy …), their comments, and what a
 * decision does to issues and agents. HTTP in routes.ts. The approval rows themselves: records/.
 *
 * This index is what the rest of the code may import from here.
 */
export { type ApprovedHandler, onApproved } from "./after-decision";
export {
  type ApprovalSchema,
  CompanyParamSchema,
  CreateApprovalBodySchema,
  ListApprovalsQuerySchema,
} from "./schemas";
