import { and, eq } from "drizzle-orm";
import type { ActorRef } from "../../core/actor";
import type { Db } from "../../db/client";
import {
  type AgentRow,
  agents,
  type HeartbeatRunRow,
  type IssueRow,
  type IssueStatus,
} from "../../db/schema";
import { wakeRun } from "./wake";

/** A comment on finished work is a note for the record, not a call to act. */
const FINISHED: ReadonlySet<IssueStatus> = new Set(["done", "cancelled"]);

/** The issue's assignee agent when a comment on it should wake one (no query otherwise). */
export async function commentedAssignee(
  db: Db,
  issue: Pick<IssueRow, "companyId" | "assigneeAgentId" | "status">,
): Promise<AgentRow | null> {
  const [agent] = (await commentedAssigneeRead(db, issue)) ?? [];
  return agent ?? null;
}

/** The same read unsent (its rows: the agent, or none), to join a batch of reads; null: no query. */
export function commentedAssigneeRead(
  db: Db,
  issue: Pick<IssueRow, "companyId" | "assigneeAgentId" | "status">,
) {
  if (issue.assigneeAgentId === null || FINISHED.has(issue.status)) return null;
  return db
    .select()
    .from(agents)
    .where(and(eq(agents.id, issue.assigneeAgentId), eq(agents.companyId, issue.companyId)))
    .limit(1);
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
