import { eq } from "drizzle-orm";
import { type ActorRef, authorColumns } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { type MaybeRead, readTogether } from "../../db/read-batch";
import { type AgentRow, type IssueCommentRow, type IssueRow, issueComments, issues } from "../../db/schema";
import {
  memberMentionCandidatesRead,
  mentionedUserIds,
  type NotificationDraft,
  notificationIdsOf,
  notificationInserts,
  recipientsOf,
} from "../people";
import { activityInsert, authorNameRead } from "../shared";
import {
  assigneeOfIssueRead,
  commentedWake,
  type MentionCandidate,
  mentionCandidatesRead,
  mentionWakes,
  openIssueAssignee,
  wakeInsert,
} from "../wakes";
import { commentResource } from "./comment-resource";
import type { IssueLocation } from "./locator";
import type { IssueOpCompanions, IssueOpHandler } from "./operations";
import { commitBatch, type Statement } from "./store";

export interface CommentWrite {
  comment: IssueCommentRow;
  /** The comment, its wakes and the activity row: join them to the caller's batch. */
  statements: Statement[];
  mentionedAgentIds: string[];
  /** Members the comment mentions and notifies (never its author). */
  notifiedUserIds: string[];
  /** The notifications it writes (one per member it notifies). */
  notificationIds: string[];
  /** At least one wake was queued (not refused). */
  queuedRuns: boolean;
}

/**
 * Everything one comment writes, unexecuted: used by POST comments and by PATCH with `comment`, so
 * both insert the comment, wake the mentioned agents and the assignee and log it the same way,
 * atomically with the rest of their batch. `companyAgents` are the mention candidates (see
 * `mentionCandidates`), `assignee` the agent `commentedAssignee` found, `alreadyWoken` agents the
 * caller's batch wakes anyway (a reassignment), so the comment adds no second run for them.
 */
export function commentWrites(
  db: Db,
  input: {
    issue: IssueRow;
    actor: ActorRef;
    body: string;
    now: number;
    companyAgents: readonly AgentRow[];
    /** Members by display name, for @-mentions of people (`memberMentionCandidates`). */
    companyMembers: readonly MentionCandidate[];
    assignee: AgentRow | null;
    alreadyWoken?: readonly string[];
  },
): CommentWrite {
  const { issue, actor, body, now } = input;
  const author = authorColumns(actor);
  const comment: IssueCommentRow = {
    id: newId(),
    companyId: issue.companyId,
    issueId: issue.id,
    authorAgentId: author.agentId,
    authorUserId: author.userId,
    body,
    createdAt: now,
    updatedAt: now,
  };
  const wakes = mentionWakes(body, input.companyAgents, {
    issueId: issue.id,
    commentId: comment.id,
    author: actor,
    now,
  });
  const mentionedAgentIds = wakes.map((run) => run.agentId);
  const commented = commentedWake(input.assignee, {
    issueId: issue.id,
    commentId: comment.id,
    author: actor,
    now,
    alreadyWoken: [...mentionedAgentIds, ...(input.alreadyWoken ?? [])],
  });
  if (commented) wakes.push(commented);
  const mentions: NotificationDraft[] = mentionedUserIds(body, input.companyMembers).map((userId) => ({
    id: newId(),
    companyId: issue.companyId,
    userId,
    kind: "mention",
    issueId: issue.id,
    commentId: comment.id,
    actor,
  }));
  const notifiedUserIds = recipientsOf(mentions);
  const statements: Statement[] = [
    db.insert(issueComments).values(comment),
    ...notificationInserts(db, mentions, now),
    ...wakes.map((run) => wakeInsert(db, run)),
    activityInsert(
      db,
      {
        companyId: issue.companyId,
        actor,
        action: "issue.comment_added",
        entityType: "issue",
        entityId: issue.id,
        details: { commentId: comment.id, identifier: issue.identifier, mentionedAgentIds, notifiedUserIds },
      },
      now,
    ),
  ];
  return {
    comment,
    statements,
    mentionedAgentIds,
    notifiedUserIds,
    notificationIds: notificationIdsOf(mentions),
    queuedRuns: wakes.some((run) => run.status === "queued"),
  };
}

/**
 * What a comment needs to know besides the issue, unsent: whom it may mention, the assignee it may
 * wake (`assignee`, a read of that agent), the author's name for the answer. POST comments and PATCH
 * with `comment` both send these with the issue's row (`IssueOpCompanions`).
 */
export const commentReads = (
  db: Db,
  at: IssueLocation,
  body: string,
  actor: ActorRef,
  assignee: MaybeRead,
): MaybeRead[] => [
  mentionCandidatesRead(db, at.companyId, body),
  memberMentionCandidatesRead(db, at.companyId, body),
  assignee,
  authorNameRead(db, at.companyId, authorColumns(actor)),
];

/** `commentReads`' answers, named; the assignee only when a comment on `issue` should wake it. */
export function commentContext(
  answers: Array<unknown[] | null>,
  issue: Pick<IssueRow, "assigneeAgentId" | "status">,
) {
  const [agentRows, memberRows, assigneeRows, authorRows] = answers;
  return {
    companyAgents: (agentRows ?? []) as AgentRow[],
    companyMembers: (memberRows ?? []) as MentionCandidate[],
    assignee: openIssueAssignee(issue, assigneeRows ?? null),
    authorName: (authorRows?.[0] as { name: string } | undefined)?.name ?? null,
  };
}

/** A comment's reads, the assignee as the row stands (joined through it). */
export const commentCompanions: IssueOpCompanions<"comment"> = (db, at, op) =>
  commentReads(db, at, op.input.body, op.actor, assigneeOfIssueRead(db, at.id));

/** POST /issues/:id/comments: the comment, its wakes and the issue's updatedAt, in one batch. */
export const addComment: IssueOpHandler<"comment"> = async ({ db, issue, op, now, companions }) => {
  const { companyAgents, companyMembers, assignee, authorName } = commentContext(
    companions ?? (await readTogether(db, commentCompanions(db, issue, op))),
    issue,
  );
  const write = commentWrites(db, {
    issue,
    actor: op.actor,
    body: op.input.body,
    now,
    companyAgents,
    companyMembers,
    assignee,
  });
  await commitBatch(
    db,
    [...write.statements, db.update(issues).set({ updatedAt: now }).where(eq(issues.id, issue.id))],
    op.guard,
  );
  return {
    status: 201,
    body: commentResource(write.comment, authorName),
    queuedRuns: write.queuedRuns,
    notifiedUserIds: write.notifiedUserIds,
    notificationIds: write.notificationIds,
  };
};
