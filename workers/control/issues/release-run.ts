import { eq } from "drizzle-orm";
import { type IssueStatus, issues } from "../../db/schema";
import { activityInsert } from "../shared";
import type { IssueOpHandler } from "./operations";
import { issueResource } from "./resource";

/**
 * A run that ended without finishing its work (failed, timed out, its runner died) must not leave
 * the issue locked: like POST …/release, in_progress goes back to todo and the assignee is cleared,
 * so any agent can check it out again. Only when the issue is still held by exactly that run; an
 * issue the run already finished or gave away is left alone.
 */
export const releaseRunLock: IssueOpHandler<"releaseRun"> = async ({ db, issue, op, now }) => {
  if (issue.checkoutRunId !== op.runId || issue.status !== "in_progress") {
    return { status: 200, body: issueResource(issue) };
  }
  const status: IssueStatus = "todo";
  const changes = {
    status,
    assigneeAgentId: null,
    assigneeUserId: null,
    checkoutRunId: null,
    updatedAt: now,
  };
  await db.batch([
    db.update(issues).set(changes).where(eq(issues.id, issue.id)),
    activityInsert(
      db,
      {
        companyId: issue.companyId,
        actor: { type: "system", process: "runner" },
        action: "issue.released",
        entityType: "issue",
        entityId: issue.id,
        details: {
          previousStatus: issue.status,
          status,
          previousAssigneeAgentId: issue.assigneeAgentId,
          runId: op.runId,
          reason: op.reason,
        },
      },
      now,
    ),
  ]);
  return { status: 200, body: issueResource({ ...issue, ...changes }) };
};
