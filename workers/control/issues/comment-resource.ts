import type { Db } from "../../db/client";
import type { IssueCommentRow } from "../../db/schema";
import { actorNames, nameOf } from "../shared";

/**
 * A comment as every endpoint returns it (the list, one comment, POST, and PATCH with `comment`).
 * `authorName` is the display name of the author (user or agent), null when the account is gone.
 */
export const commentResource = (row: IssueCommentRow, authorName: string | null) => ({
  id: row.id,
  issueId: row.issueId,
  companyId: row.companyId,
  body: row.body,
  authorAgentId: row.authorAgentId,
  authorUserId: row.authorUserId,
  authorName,
  createdAt: new Date(row.createdAt).toISOString(),
  updatedAt: new Date(row.updatedAt).toISOString(),
});

export type CommentResource = ReturnType<typeof commentResource>;

/** Comments of one company with their authors' names, resolved in one batched read for the list. */
export async function namedComments(
  db: Db,
  companyId: string,
  rows: readonly IssueCommentRow[],
): Promise<CommentResource[]> {
  const names = await actorNames(db, companyId, {
    userIds: rows.map((row) => row.authorUserId),
    agentIds: rows.map((row) => row.authorAgentId),
  });
  return rows.map((row) => commentResource(row, nameOf(names, row.authorUserId, row.authorAgentId)));
}
