import { and, eq, sql } from "drizzle-orm";
import type { ActorRef } from "../../core/actor";
import type { Db } from "../../db/client";
import { agents, type IssueRow } from "../../db/schema";
import { forbidden } from "../../http/errors";

export const CANCEL_FORBIDDEN = "only the assigning team's manager can cancel this task";

/** Reporting chains are cut here (and a cyclic one ends there too). */
const MAX_CHAIN = 50;

/** The managers above `agentId`, nearest first (its reportsTo chain, within the company). */
async function managersOf(db: Db, companyId: string, agentId: string): Promise<string[]> {
  const rows = await db.all<{ id: string }>(sql`
    WITH RECURSIVE up(id, depth) AS (
      SELECT reports_to, 1 FROM agents WHERE id = ${agentId} AND company_id = ${companyId}
      UNION ALL
      SELECT a.reports_to, up.depth + 1 FROM up JOIN agents a ON a.id = up.id AND a.company_id = ${companyId}
      WHERE up.depth < ${MAX_CHAIN}
    )
    SELECT id FROM up WHERE id IS NOT NULL ORDER BY depth`);
  return rows.map((row) => row.id);
}

/**
 * Who may cancel (spec: "cancel a task assigned across teams: only the assigning team's manager").
 * The board may cancel anything. An agent is on the assigning side when it created the issue or is
 * an ancestor manager of the agent that did; a task the board created is the CEO's to cancel.
 * So an assignee from another team marks the task blocked or hands it back instead.
 */
export async function assertMayCancel(db: Db, issue: IssueRow, actor: ActorRef): Promise<void> {
  if (actor.type === "board") return;
  const creator = issue.createdByAgentId;
  if (creator === actor.agentId) return;
  if (creator === null) {
    const me = await db
      .select({ role: agents.role })
      .from(agents)
      .where(and(eq(agents.id, actor.agentId), eq(agents.companyId, issue.companyId)))
      .get();
    if (me?.role === "ceo") return;
    throw forbidden(`${CANCEL_FORBIDDEN} (the board created it: the board or the CEO may cancel it)`);
  }
  const managers = await managersOf(db, issue.companyId, creator);
  if (managers.includes(actor.agentId)) return;
  throw forbidden(CANCEL_FORBIDDEN);
}
