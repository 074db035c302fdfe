import { and, eq, getTableColumns } from "drizzle-orm";
import type { ActorRef } from "../../core/actor";
import type { Db } from "../../db/client";
import {
  type AgentRow,
  agents,
  type HeartbeatRunRow,
  type IssueRow,
  type IssueStatus,
  issues,
} from "../../db/schema";
import { wakeRun } from "./wake";

/** A comment on finished work is a note for the record, not a call to act. */
const FINISHED: ReadonlySet<IssueStatus> = new Set(["done", "cancelled"]);

/** The issue's assignee agent when a comment on it should wake one (no query otherwise). */
export async function commentedAssignee(
  db: Db,
  issue: Pick<IssueRow, "companyId" | "assigneeAgentId" | "status">,
): Promise<AgentRow | null> {
  if (issue.assigneeAgentId === null || FINISHED.has(issue.status)) return null;
  return openIssueAssignee(issue, await companyAgentRead(db, issue.companyId, issue.assigneeAgentId));
}

/**
 * The agent assigned to the issue as its row stands when the read runs, found through the row (so it
 * can go in the same batch as the read of the row itself); `openIssueAssignee` then keeps it only when
 * a comment should wake it.
 */
export const assigneeOfIssueRead = (db: Db, issueId: string) =>
  db
    .select(getTableColumns(agents))
    .from(issues)
    .innerJoin(agents, and(eq(agents.id, issues.assigneeAgentId), eq(agents.companyId, issues.companyId)))
    .where(eq(issues.id, issueId))
    .limit(1);

/** An agent of the company by id, unsent (the assignee a PATCH is about to set). */
export const companyAgentRead = (db: Db, companyId: string, agentId: string) =>
  db
    .select()
    .from(agents)
    .where(and(eq(agents.id, agentId), eq(agents.companyId, companyId)))
    .limit(1);

/**
 * Of the rows a read of the assignee answered (`assigneeOfIssueRead`, `companyAgentRead`), the agent
 * a comment on `issue` (as it stands, or as a PATCH leaves it) should wake, or null.
 */
export function openIssueAssignee(
  issue: Pick<IssueRow, "assigneeAgentId" | "status">,
  rows: readonly unknown[] | null,
): AgentRow | null {
  if (issue.assigneeAgentId === null || FINISHED.has(issue.status)) return null;
  const agent = rows?.[0] as AgentRow | undefined;
  return agent?.id === issue.assigneeAgentId ? agent : null;
}

/**
 * The assignee's `issue_commented` wake, or null: never for its own comment, nor when the comment
 * already wakes it (`alreadyWoken`: the mentioned or newly assigned agents), so one comment means one
 * run. A refused wake (paused, over budget …) is still a row, cancelled with its reason.
 */
export function commentedWake(
  assignee: AgentRow | null,
  context: {
    issueId: string;
    commentId: string;
    author: ActorRef;
    now: number;
    alreadyWoken: readonly string[];
  },
): HeartbeatRunRow | null {
  if (!assignee) return null;
  if (context.author.type === "agent" && context.author.agentId === assignee.id) return null;
  if (context.alreadyWoken.includes(assignee.id)) return null;
  const wake = {
    source: "comment",
    reason: "issue_commented",
    issueId: context.issueId,
    commentId: context.commentId,
    requestedBy: context.author,
  };
  return wakeRun(assignee, wake, context.now);
}
