/**
 * People of a company as the control plane addresses them: @-mentions of members, and the
 * notification inbox (mentions, assignments) each board user reads for themselves. Below issues,
 * which write notifications with their comments and assignments.
 *
 * This index is what the rest of the code may import from here.
 */

export { memberMentionCandidates, memberMentionCandidatesRead, mentionedUserIds } from "./mentions";
export {
  assignmentDraft,
  type NotificationDraft,
  notificationIdsOf,
  notificationInserts,
  recipientsOf,
} from "./notify";
export type { NotificationListSchema } from "./schemas";
