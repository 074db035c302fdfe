/**
 * Approval rows as other domains read them (lookup, listing, the resource shape). Kept apart from
 * ../ so that issue operations, which check approvals, sit below the approval workflow.
 *
 * This index is what the rest of the code may import from here.
 */
export { approvalResource, namedApproval, namedApprovals } from "./resource";
export {
  assertCeoMayStartWork,
  assertHirePayload,
  companyAgent,
  companyIssueIds,
  findApproval,
  hiredAgentId,
  linkedIssues,
  listApprovals,
  parseApprovalStatuses,
} from "./store";
