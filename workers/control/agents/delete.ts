import { createRoute } from "@hono/zod-openapi";
import { and, eq, notInArray, sum } from "drizzle-orm";
import { agentCredentialsChanged } from "../../auth/agent-key-store";
import { refOf } from "../../core/actor";
import type { Db } from "../../db/client";
import { type AgentRow, agents, costEvents, goals, issues, projects, routines } from "../../db/schema";
import { conflict } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter } from "../../http/openapi";
import { budgetsRemoved } from "../budgets";
import { activityInsert, blockerPart, controlContext, requireBoard } from "../shared";
import { AgentParamSchema } from "./schemas";
import { commit, findAgent } from "./store";

/** DELETE /agents/{agentId}: removing a terminated agent for good. */
export const agentDeleteRoutes = createRouter();

/**
 * Work still waiting on the agent would be left with an assignee nobody can see: open issues and
 * routines must be reassigned (or cancelled, deleted) first. 409 naming them.
 */
async function assertNoOpenWork(db: Db, agent: AgentRow): Promise<void> {
  const [openIssues, ownRoutines] = await Promise.all([
    db
      .select({ id: issues.id, identifier: issues.identifier })
      .from(issues)
      .where(and(eq(issues.assigneeAgentId, agent.id), notInArray(issues.status, ["done", "cancelled"]))),
    db
      .select({ id: routines.id, title: routines.title })
      .from(routines)
      .where(eq(routines.assigneeAgentId, agent.id)),
  ]);
  const blockers = [
    ...blockerPart(
      "open issues",
      openIssues.map((row) => row.identifier),
    ),
    ...blockerPart(
      "routines",
      ownRoutines.map((row) => `"${row.title}"`),
    ),
  ];
  if (blockers.length > 0)
    throw conflict(`Reassign, cancel or delete the agent's work first: ${blockers.join("; ")}`, {
      openIssueIds: openIssues.map((row) => row.id),
      routineIds: ownRoutines.map((row) => row.id),
    });
}

agentDeleteRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/agents/{agentId}",
    tags: ["Agents"],
    summary: "Delete a terminated agent (board only)",
    description:
      "Only a terminated agent (else 409: terminate first) with no open issues and no routines assigned " +
      "(else 409 naming them). Deletes it with its keys, config revisions, runs and their logs, and its " +
      "cost events (the activity row agent.deleted keeps its name, role and total cost). Its comments, " +
      "finished issues and activity stay, naming an agent id that no longer resolves; goals it owned and " +
      "projects it led lose the owner or lead; reports still under it move to its manager.",
    security: controlAuth,
    request: { params: AgentParamSchema },
    responses: {
      204: { description: "Deleted" },
      ...controlErrors,
      409: controlError("Not terminated yet, or still assigned open issues or routines"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const agent = await findAgent(db, actor, c.req.valid("param").agentId);
    requireBoard(actor, "delete agents");
    if (agent.status !== "terminated")
      throw conflict("Terminate the agent first (POST /agents/{agentId}/terminate)", {
        status: agent.status,
      });
    await assertNoOpenWork(db, agent);
    const spent = await db
      .select({ cents: sum(costEvents.costCents) })
      .from(costEvents)
      .where(eq(costEvents.agentId, agent.id))
      .get();
    const now = Date.now();
    await commit(db, [
      db
        .update(agents)
        .set({ reportsTo: agent.reportsTo, updatedAt: now })
        .where(eq(agents.reportsTo, agent.id)),
      db.update(goals).set({ ownerAgentId: null, updatedAt: now }).where(eq(goals.ownerAgentId, agent.id)),
      db
        .update(projects)
        .set({ leadAgentId: null, updatedAt: now })
        .where(eq(projects.leadAgentId, agent.id)),
      db.delete(costEvents).where(eq(costEvents.agentId, agent.id)),
      activityInsert(
        db,
        {
          companyId: agent.companyId,
          actor: refOf(actor),
          action: "agent.deleted",
          entityType: "agent",
          entityId: agent.id,
          details: { name: agent.name, role: agent.role, costCents: Number(spent?.cents ?? 0) },
        },
        now,
      ),
      // Its budgets go with it; their incidents close (nothing is left to hold).
      ...budgetsRemoved(db, "agent", agent.id, now),
      db.delete(agents).where(eq(agents.id, agent.id)),
    ]);
    await agentCredentialsChanged(c.env, agent.id);
    return c.body(null, 204);
  },
);
