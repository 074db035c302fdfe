import { and, eq } from "drizzle-orm";
import type { ActorRef } from "../../core/actor";
import type { Db } from "../../db/client";
import { agents, type HeartbeatRunRow, type IssueStatus } from "../../db/schema";
import { wakeRun } from "./wake";

/** Work an agent is expected to act on; a backlog assignment is planning, not a call to act. */
const ACTIONABLE: ReadonlySet<IssueStatus> = new Set(["todo", "in_progress", "blocked"]);

interface Assignment {
  issueId: string;
  companyId: string;
  /** The agent the issue is now assigned to, and the one it was assigned to before (null: none). */
  agentId: string | null;
  previousAgentId: string | null;
  status: IssueStatus;
  actor: ActorRef;
  now: number;
}

/**
 * The wake for an issue newly assigned to an agent (created assigned, or reassigned by PATCH), for
 * the caller's batch; null when nothing changed hands, the agent assigned itself, or the issue is not
 * actionable yet. A refused wake (paused, over budget …) is still a row, cancelled with its reason.
 */
export async function assignmentWake(db: Db, assignment: Assignment): Promise<HeartbeatRunRow | null> {
  const { agentId, actor } = assignment;
  if (agentId === null || agentId === assignment.previousAgentId) return null;
  if (actor.type === "agent" && actor.agentId === agentId) return null;
  if (!ACTIONABLE.has(assignment.status)) return null;
  const agent = await db
    .select()
    .from(agents)
    .where(and(eq(agents.id, agentId), eq(agents.companyId, assignment.companyId)))
    .get();
  if (!agent) return null;
  const wake = {
    source: "assignment",
    reason: "issue_assigned",
    issueId: assignment.issueId,
    requestedBy: actor,
  };
  return wakeRun(agent, wake, assignment.now);
}
