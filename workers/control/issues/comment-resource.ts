import type { IssueCommentRow } from "../../db/schema";

/** A comment as every endpoint returns it (the list, one comment, POST, and PATCH with `comment`). */
export const commentResource = (row: IssueCommentRow) => ({
  id: row.id,
  issueId: row.issueId,
  companyId: row.companyId,
  body: row.body,
  authorAgentId: row.authorAgentId,
  authorUserId: row.authorUserId,
  createdAt: new Date(row.createdAt).toISOString(),
  updatedAt: new Date(row.updatedAt).toISOString(),
});

export type CommentResource = ReturnType<typeof commentResource>;
