import { eq } from "drizzle-orm";
import type { IssueStatus } from "../../db/schema";
import { issues } from "../../db/schema";
import { conflict } from "../../http/errors";
import { activityInsert } from "../shared";
import type { IssueOpHandler } from "./operations";
import { issueResource } from "./resource";

/**
 * Gives the issue back. Work in progress returns to todo (in_progress requires an assignee, and
 * todo is what checkout claims again); any other status stays, only the assignee is cleared.
 * An agent may release only what it holds; a board user may release anything.
 */
export const releaseIssue: IssueOpHandler<"release"> = async ({ db, issue, op, now }) => {
  const { actor } = op;
  if (actor.type === "agent" && issue.assigneeAgentId !== actor.agentId) {
    throw conflict("Only the assignee can release the issue", {
      issueId: issue.id,
      status: issue.status,
      assigneeAgentId: issue.assigneeAgentId,
    });
  }
  const status: IssueStatus = issue.status === "in_progress" ? "todo" : issue.status;
  // Nothing held, nothing to give back: answer like a release, without a write or a log entry.
  if (status === issue.status && issue.assigneeAgentId === null && issue.assigneeUserId === null) {
    return { status: 200, body: issueResource(issue) };
  }
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
        actor,
        action: "issue.released",
        entityType: "issue",
        entityId: issue.id,
        details: {
          previousStatus: issue.status,
          status,
          previousAssigneeAgentId: issue.assigneeAgentId,
          previousAssigneeUserId: issue.assigneeUserId,
        },
      },
      now,
    ),
  ]);
  return { status: 200, body: issueResource({ ...issue, ...changes }) };
};
