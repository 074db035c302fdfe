/**
 * What every control-plane domain uses: access checks, the activity log, redaction of secrets.
 *
 * This index is what the rest of the code may import from here.
 */
export { canAccessCompany, companyForActor, controlContext, ensureVisible, requireBoard } from "./access";
export {
  type ActivityEntry,
  activityInsert,
  activityPage,
  activityResource,
  listActivity,
  namedActivity,
} from "./activity";
export { blockerPart, namedFew } from "./blockers";
export { issueIdIn, issueIdsIn, issueKeyCondition, UUID } from "./issue-keys";
export { type IssueLocation, knownIssueLocation, rememberIssueLocation } from "./issue-places";
export { forgetMember } from "./memberships";
export { utcMonth } from "./month";
export {
  cappedCountQuery,
  cappedTotal,
  pageHeaders,
  pageOf,
  setPageHeaders,
  TOTAL_CAP,
  type Total,
  totalOf,
} from "./paging";
export { type ActorIds, type ActorNames, actorNames, authorNameRead, nameOf } from "./people";
export { isSecretKey, isSecretValue, REDACTED, redactSecrets } from "./redact";
export {
  keyCompanyGate,
  membershipRole,
  refuseViewerWrites,
  requireOwner,
  requireOwnerAuthority,
  VIEWER_REFUSAL,
  viewerGate,
} from "./roles";
