/**
 * Wakes: queueing heartbeat runs (mention, comment, assignment, on demand, …) and nudging the runners.
 * Below issues and runs, which both queue wakes.
 *
 * This index is what the rest of the code may import from here.
 */
export { assignmentWake } from "./assignment";
export {
  assigneeOfIssueRead,
  commentedAssignee,
  commentedWake,
  companyAgentRead,
  openIssueAssignee,
} from "./commented";
export { budgetHoldReason, cancelQueuedIn, type HoldTarget, runsOfScope } from "./holds";
export {
  type MentionCandidate,
  mentionCandidates,
  mentionCandidatesRead,
  mentionedIds,
  mentionWakes,
} from "./mentions";
export { issuesClosed, type RunDispatcherObject, runDispatcher, runsQueued } from "./nudge";
export {
  type Budgeted,
  budgetSpent,
  cancelQueuedCompanyRuns,
  cancelQueuedRuns,
  heartbeatSettings,
  queuePositions,
  runResource,
  wakeInsert,
  wakeRefusal,
  wakeRun,
} from "./wake";
