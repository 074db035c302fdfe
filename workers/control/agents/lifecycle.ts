import { createRoute } from "@hono/zod-openapi";
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { agentCredentialsChanged } from "../../auth/agent-key-store";
import { type ActorRef, refOf } from "../../core/actor";
import type { Db } from "../../db/client";
import {
  type AgentRow,
  agentApiKeys,
  agents,
  approvals,
  type HeartbeatRunRow,
  heartbeatRuns,
  issues,
} from "../../db/schema";
import { conflict, unprocessable } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json } from "../../http/openapi";
import { companiesWithConnectedRunner } from "../runners";
import { activityInsert, actorNames, controlContext, issueIdIn, nameOf } from "../shared";
import { cancelQueuedRuns, queuePositions, runResource, runsQueued, wakeInsert, wakeRun } from "../wakes";
import { AgentParamSchema, AgentSchema, HeartbeatInvokeBodySchema, RunSchema } from "./schemas";
import { agentResource, agentWithCompany, authorize, commit } from "./store";

/** Pause, resume, terminate (irreversible) and the manual heartbeat. */
export const agentLifecycleRoutes = createRouter();
const tags = ["Agents"];

const lifecycleRoute = (action: string, summary: string, description: string) =>
  createRoute({
    method: "post",
    path: `/agents/{agentId}/${action}`,
    tags,
    summary,
    description,
    security: controlAuth,
    request: { params: AgentParamSchema },
    responses: {
      200: json(AgentSchema, "The agent after the change"),
      ...controlErrors,
      422: controlError("Not allowed from the agent's current status"),
    },
  });

function logEntry(db: Db, agent: AgentRow, actor: ActorRef, action: string, now: number, details = {}) {
  return activityInsert(
    db,
    { companyId: agent.companyId, actor, action, entityType: "agent", entityId: agent.id, details },
    now,
  );
}

agentLifecycleRoutes.openapi(
  lifecycleRoute(
    "pause",
    "Pause an agent: no heartbeats until resumed (board, the CEO, a manager above it)",
    "Sets status paused with pauseReason manual and cancels queued runs. Pausing a paused agent " +
      "changes nothing; a terminated or pending_approval agent answers 422.",
  ),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { agent, byId } = await agentWithCompany(db, actor, c.req.valid("param").agentId);
    authorize(actor, agent, byId, ["ceo", "ancestor"], "pause this agent");
    if (agent.status === "terminated" || agent.status === "pending_approval")
      throw unprocessable(`agent is ${agent.status} and cannot be paused`);
    if (agent.status === "paused") return c.json(agentResource(agent), 200);
    const now = Date.now();
    const next: AgentRow = { ...agent, status: "paused", pauseReason: "manual", updatedAt: now };
    await commit(db, [
      db
        .update(agents)
        .set({ status: next.status, pauseReason: next.pauseReason, updatedAt: now })
        .where(eq(agents.id, agent.id)),
      cancelQueuedRuns(db, agent.id, "agent_paused", now),
      logEntry(db, agent, refOf(actor), "agent.paused", now, { from: agent.status, pauseReason: "manual" }),
    ]);
    await agentCredentialsChanged(c.env, agent.id);
    return c.json(agentResource(next), 200);
  },
);

agentLifecycleRoutes.openapi(
  lifecycleRoute(
    "resume",
    "Resume a paused agent (board, the CEO, a manager above it)",
    "paused → idle. An agent that is not paused (including terminated and pending_approval) answers 422.",
  ),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { agent, byId } = await agentWithCompany(db, actor, c.req.valid("param").agentId);
    authorize(actor, agent, byId, ["ceo", "ancestor"], "resume this agent");
    if (agent.status !== "paused") throw unprocessable(`agent is ${agent.status}, not paused`);
    const now = Date.now();
    const next: AgentRow = { ...agent, status: "idle", pauseReason: null, updatedAt: now };
    await commit(db, [
      db
        .update(agents)
        .set({ status: "idle", pauseReason: null, updatedAt: now })
        .where(eq(agents.id, agent.id)),
      logEntry(db, agent, refOf(actor), "agent.resumed", now, { pauseReason: agent.pauseReason }),
    ]);
    await agentCredentialsChanged(c.env, agent.id);
    return c.json(agentResource(next), 200);
  },
);

/**
 * Everything termination changes besides the agent row, in one batch with it: keys revoked (they
 * answer 401 from then on), queued runs and a still-open hire approval cancelled, and direct
 * reports moved up to the terminated agent's manager so their escalation path stays alive.
 */
function terminationStatements(
  db: Db,
  agent: AgentRow,
  reportIds: string[],
  now: number,
): BatchItem<"sqlite">[] {
  const statements: BatchItem<"sqlite">[] = [
    db
      .update(agents)
      .set({ status: "terminated", pauseReason: null, terminatedAt: now, updatedAt: now })
      .where(eq(agents.id, agent.id)),
    db
      .update(agentApiKeys)
      .set({ revokedAt: now })
      .where(and(eq(agentApiKeys.agentId, agent.id), isNull(agentApiKeys.revokedAt))),
    cancelQueuedRuns(db, agent.id, "agent_terminated", now),
    db
      .update(approvals)
      .set({ status: "cancelled", updatedAt: now })
      .where(
        and(
          eq(approvals.companyId, agent.companyId),
          eq(approvals.type, "hire_agent"),
          inArray(approvals.status, ["pending", "revision_requested"]),
          sql`json_extract(${approvals.payload}, '$.agentId') = ${agent.id}`,
        ),
      ),
  ];
  if (reportIds.length > 0)
    statements.push(
      db
        .update(agents)
        .set({ reportsTo: agent.reportsTo, updatedAt: now })
        .where(inArray(agents.id, reportIds)),
    );
  return statements;
}

agentLifecycleRoutes.openapi(
  lifecycleRoute(
    "terminate",
    "Terminate an agent permanently (board, the CEO, a manager above it)",
    "Sets status terminated and terminatedAt, revokes all its keys, cancels its queued runs and any " +
      "open hire approval, and moves its direct reports to its manager. Irreversible: terminating " +
      "again answers 200 without changes; pause and resume answer 422.",
  ),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { agent, byId } = await agentWithCompany(db, actor, c.req.valid("param").agentId);
    authorize(actor, agent, byId, ["ceo", "ancestor"], "terminate this agent");
    if (agent.status === "terminated") return c.json(agentResource(agent), 200);
    const now = Date.now();
    const reportIds = [...byId.values()].filter((row) => row.reportsTo === agent.id).map((row) => row.id);
    const next: AgentRow = {
      ...agent,
      status: "terminated",
      pauseReason: null,
      terminatedAt: now,
      updatedAt: now,
    };
    await commit(db, [
      ...terminationStatements(db, agent, reportIds, now),
      logEntry(db, agent, refOf(actor), "agent.terminated", now, {
        from: agent.status,
        reassignedReports: reportIds,
        newManagerId: agent.reportsTo,
      }),
    ]);
    await agentCredentialsChanged(c.env, agent.id);
    return c.json(agentResource(next), 200);
  },
);

/**
 * The issue a manual wake is about: its id or identifier, of the agent's company (any other is the
 * 422 an unknown reference gets, naming the field).
 */
async function invokedIssueId(db: Db, agent: AgentRow, key: string | undefined): Promise<string | null> {
  if (key === undefined) return null;
  const id = await issueIdIn(db, agent.companyId, key);
  const row = await db
    .select({ id: issues.id })
    .from(issues)
    .where(and(eq(issues.id, id), eq(issues.companyId, agent.companyId)))
    .get();
  if (!row) throw unprocessable("issueId: no such issue in this company", { field: "issueId" });
  return row.id;
}

/**
 * The run as stored: the database cancels a wake of a paused or archived company (migration 0007),
 * and a wake about an issue the agent already has a queued run for joins that run (coalesced).
 */
async function storedWake(db: Db, run: HeartbeatRunRow): Promise<HeartbeatRunRow> {
  const own = await db.select().from(heartbeatRuns).where(eq(heartbeatRuns.id, run.id)).get();
  if (own || run.issueId === null) return own ?? run;
  const joined = await db
    .select()
    .from(heartbeatRuns)
    .where(
      and(
        eq(heartbeatRuns.agentId, run.agentId),
        eq(heartbeatRuns.issueId, run.issueId),
        eq(heartbeatRuns.status, "queued"),
      ),
    )
    .get();
  return joined ?? run;
}

agentLifecycleRoutes.openapi(
  createRoute({
    method: "post",
    path: "/agents/{agentId}/heartbeat/invoke",
    tags,
    summary: "Trigger a heartbeat now (board, the agent itself, a manager above it)",
    description:
      "Queues a heartbeat run (source on_demand, reason manual_invoke): 202 with the run. The optional " +
      "body `{issueId}` (an id or identifier such as `ACM-12`, of the agent's company; else 422) makes it " +
      "a wake about that issue: the run gets it as PLATFORM_TASK_ID and resumes the CLI session the " +
      "agent had on it, as an assignment or mention wake does; a run already queued for the agent and " +
      "that issue absorbs the wake (coalescedCount) and is the one answered. An agent " +
      "that cannot run (paused, terminated, pending_approval, over its or its company's budget) gets " +
      "the run recorded as cancelled and the call answers 409 with the reason and the run in details.",
    security: controlAuth,
    request: {
      params: AgentParamSchema,
      body: { content: { "application/json": { schema: HeartbeatInvokeBodySchema } }, required: false },
    },
    responses: {
      202: json(RunSchema, "The queued run"),
      ...controlErrors,
      409: controlError("The agent cannot run now; details.run is the cancelled run"),
      422: controlError("issueId names no issue of the agent's company"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { agent, byId } = await agentWithCompany(db, actor, c.req.valid("param").agentId);
    authorize(actor, agent, byId, ["self", "ancestor"], "invoke this agent's heartbeat");
    const issueId = await invokedIssueId(db, agent, c.req.valid("json")?.issueId);
    const now = Date.now();
    const ref = refOf(actor);
    const run = wakeRun(
      agent,
      { source: "on_demand", reason: "manual_invoke", issueId, requestedBy: ref },
      now,
    );
    await commit(db, [wakeInsert(db, run)]);
    // Logged after the read: a wake a queued run absorbed has no row of its own, so the entry names
    // the run that will actually do the work.
    const stored = await storedWake(db, run);
    await commit(db, [
      logEntry(db, agent, ref, "agent.heartbeat_invoked", now, {
        runId: stored.id,
        status: stored.status,
        errorReason: stored.errorReason,
        issueId,
      }),
    ]);
    if (stored.status === "queued") c.executionCtx.waitUntil(runsQueued(c.env, new URL(c.req.url).origin));
    const [served, names, positions] = await Promise.all([
      companiesWithConnectedRunner(db, [stored.companyId]),
      actorNames(db, stored.companyId, {
        userIds: [stored.requestedByUserId],
        agentIds: [stored.requestedByAgentId],
      }),
      queuePositions(db, [stored]),
    ]);
    const requestedByName = nameOf(names, stored.requestedByUserId, stored.requestedByAgentId);
    const position = positions.get(stored.id) ?? null;
    const resource = runResource(stored, served.has(stored.companyId), requestedByName, position);
    if (stored.errorReason !== null)
      throw conflict(`Heartbeat not started: ${stored.errorReason}`, {
        errorReason: stored.errorReason,
        run: resource,
      });
    return c.json(resource, 202);
  },
);
