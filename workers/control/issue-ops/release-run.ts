import { eq } from "drizzle-orm";
import { newId } from "../../db/client";
import { activityLog, type IssueStatus, issues } from "../../db/schema";
import { issueResource } from "../issue-resource";
import { redactSecrets } from "../redact";
import type { IssueOpHandler } from "./types";

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
  const details = redactSecrets({
    previousStatus: issue.status,
    status,
    previousAssigneeAgentId: issue.assigneeAgentId,
    runId: op.runId,
    reason: op.reason,
  });
  await db.batch([
    db.update(issues).set(changes).where(eq(issues.id, issue.id)),
    db.insert(activityLog).values({
      id: newId(),
      companyId: issue.companyId,
      actorType: "system",
      actorId: "runner",
      action: "issue.released",
      entityType: "issue",
      entityId: issue.id,
      details,
      createdAt: now,
    }),
  ]);
  return { status: 200, body: issueResource({ ...issue, ...changes }) };
};
