/**
 * The company's WhatsApp line (a session an owner links for its agents) and the board's MCP policy
 * for agents' WhatsApp sends. HTTP in routes.ts and policy-routes.ts.
 *
 * This index is what the rest of the code may import from here.
 */

export { type LineOwnerAccess, lineOwnerAccess } from "./access";
export {
  announce,
  announceFrom,
  announceLater,
  type QueueNotices,
  rememberOriginFrom,
  sendQueuedFrom,
} from "./announce";
export { DIGEST_LOCAL_MINUTE, queueDueDigests } from "./digest";
export {
  type LineRecipient,
  memberByPhone,
  quietUntil,
  type RecipientFilter,
  recipientsFor,
} from "./directory";
export { queueNotificationNotices } from "./mentions";
export { DECISION_OPTIONS, knownOrigin, type RecentNotice, recentNotices, rememberOrigin } from "./notices";
export { type LineOverview, lineOverview } from "./overview";
export { type LineContent, type LineFetch, type LineSendResult, sendOnLine } from "./send";
export {
  type LineRequest,
  lineRequestOf,
  NOTICE_CLAIM_MS,
  NOTICES_PER_MEMBER_PER_HOUR,
  registerLineAppFetch,
  type SendPass,
  sendAllDueNotices,
  sendDueNotices,
} from "./sender";
export {
  DEFAULT_DAILY_SEND_CAP,
  DEFAULT_POLICY,
  findLine,
  GOVERNED_TOOLS,
  type GovernedTool,
  mcpSettingsOf,
  type PolicySetting,
} from "./store";
export {
  APPROVAL_DECIDERS,
  queueAgentBudgetNotices,
  queueApprovalNotices,
  queueBudgetIncidentNotices,
  queueCompanyBudgetNotices,
  queueFailedRunNotices,
  queueQuestionNotices,
} from "./triggers";
