/**
 * Issues: the model, and every read-check-write the IssueDO runs (operations.ts, apply.ts and one
 * module per operation). HTTP is in routes/, which the IssueDO never loads.
 *
 * This index is what the rest of the code may import from here.
 */
export { type AppliedOutcome, applyIssueOperation } from "./apply";
export { numberedIssueStatements } from "./create";
export { readIssueDetailJson } from "./detail-view";
export type { IssueLocation } from "./locator";
export {
  announceOnIssue,
  type IssueObject,
  issueObject,
  issueObjectName,
} from "./object";
export type { IssueOperation, IssueOutcome } from "./operations";
export { markOpened } from "./read-state";
export { checkReferences } from "./refs";
export { issueResource } from "./resource";
export {
  AskQuestionBodySchema,
  type AttachmentSchema,
  CheckoutBodySchema,
  type CommentSchema,
  CreateCommentBodySchema,
  CreateIssueBodySchema,
  DocumentParamSchema,
  type InboxEntrySchema,
  type IssueDetailSchema,
  type IssueListItemSchema,
  IssueParamSchema,
  IssueSchema,
  type IssueWithLabelsSchema,
  ListCommentsQuerySchema,
  ListIssuesQuerySchema,
  PutDocumentBodySchema,
  type UpdatedIssueSchema,
  UpdateIssueBodySchema,
} from "./schemas";
export { commitBatch, type Statement } from "./store";
