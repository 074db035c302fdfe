import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { heartbeatRuns, issues } from "../../db/schema";
import { forbidden } from "../../http/errors";
import { activityInsert } from "../shared";
import { wakeInsert } from "../wakes";
import { unblockedWakes } from "./blockers";
import type { IssueOpHandler } from "./operations";
import { commitBatch, type Statement } from "./store";
import { isTerminal } from "./transitions";

/** Queued runs about the issue would start work on nothing: cancelled with the reason (for a batch). */
const cancelQueuedIssueRuns = (db: Db, issueId: string, now: number) =>
  db
    .update(heartbeatRuns)
    .set({ status: "cancelled", errorReason: "issue_deleted", finishedAt: now })
    .where(and(eq(heartbeatRuns.issueId, issueId), eq(heartbeatRuns.status, "queued")));

/**
 * DELETE /issues/:id, inside the IssueDO, board only (agents cancel instead: the record stays).
 * Comments, documents, labels, approval links, read states and blocker links go with the row (FK
 * cascade); sub-issues move up to the deleted issue's parent, so no work disappears with it; issues it
 * blocked lose the link, and those it was the last open blocker of wake their assignee; queued runs
 * about it are cancelled. The activity row keeps what it was (identifier, title, status).
 */
export const deleteIssue: IssueOpHandler<"delete"> = async ({ db, issue, op, now }) => {
  if (op.actor.type !== "board")
    throw forbidden("Only board users delete issues; agents cancel them (PATCH status cancelled)");
  const children = await db.select({ id: issues.id }).from(issues).where(eq(issues.parentId, issue.id));
  const wakes = isTerminal(issue.status) ? [] : await unblockedWakes(db, issue, op.actor, now);
  const statements: Statement[] = [
    ...wakes.map((run) => wakeInsert(db, run)),
    db.update(issues).set({ parentId: issue.parentId, updatedAt: now }).where(eq(issues.parentId, issue.id)),
    cancelQueuedIssueRuns(db, issue.id, now),
    activityInsert(
      db,
      {
        companyId: issue.companyId,
        actor: op.actor,
        action: "issue.deleted",
        entityType: "issue",
        entityId: issue.id,
        details: {
          identifier: issue.identifier,
          title: issue.title,
          status: issue.status,
          movedChildIssueIds: children.map((child) => child.id),
        },
      },
      now,
    ),
    db.delete(issues).where(eq(issues.id, issue.id)),
  ];
  await commitBatch(db, statements);
  return { status: 200, body: null, queuedRuns: wakes.some((run) => run.status === "queued") };
};
