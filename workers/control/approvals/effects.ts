import { and, eq, exists, isNull, not, type SQL, sql } from "drizzle-orm";
import { type ActorRef, activityActor } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import {
  type AgentRow,
  type ApprovalRow,
  activityLog,
  agentApiKeys,
  agents,
  approvals,
  type HeartbeatRunRow,
  heartbeatRuns,
  type JsonObject,
} from "../../db/schema";
import type { Statement } from "../issues";
import type { ActivityEntry } from "../shared";
import { redactSecrets } from "../shared";
import { wakeInsert, wakeRun } from "../wakes";

/**
 * The writes that ride along with an approval's state change, in the same D1 batch.
 *
 * Approvals have no Durable Object serialising them, so two decisions may race. The state change is
 * a conditional UPDATE (`WHERE status IN (…)`) and only one batch's UPDATE takes effect; every
 * other statement of a batch is tied to that one by `transitionGuard`: updates carry it in their
 * WHERE, inserts are followed by a DELETE of the same row unless the guard holds. So the losing
 * batch leaves nothing behind and the winner's effects commit atomically with its decision.
 */

/** How an approval leaves this batch: the status it reaches, stamped with this batch's `now`. */
export interface Transition {
  approval: ApprovalRow;
  status: ApprovalRow["status"];
  actor: ActorRef;
  now: number;
}

/**
 * True inside the batch iff this batch's UPDATE moved the approval (its status and the exact
 * `updated_at` it stamped). Two batches of the same caller in the same millisecond cannot be told
 * apart; each still makes only idempotent agent changes.
 */
export function transitionGuard(db: Db, t: Transition): SQL {
  return exists(
    db
      .select({ one: sql`1` })
      .from(approvals)
      .where(
        and(eq(approvals.id, t.approval.id), eq(approvals.status, t.status), eq(approvals.updatedAt, t.now)),
      ),
  );
}

/** An activity row (as activityInsert writes it) that only survives if the guard holds. */
export function guardedActivity(db: Db, entry: ActivityEntry, now: number, guard: SQL): Statement[] {
  const id = newId();
  return [
    db.insert(activityLog).values({
      id,
      companyId: entry.companyId,
      ...activityActor(entry.actor),
      action: entry.action,
      entityType: entry.entityType,
      entityId: entry.entityId,
      details: redactSecrets(entry.details ?? {}),
      createdAt: now,
    }),
    db.delete(activityLog).where(and(eq(activityLog.id, id), not(guard))),
  ];
}

/** The `approval.<verb>` activity row of a transition. */
export function approvalActivity(db: Db, t: Transition, action: string, details: JsonObject): Statement[] {
  return guardedActivity(
    db,
    {
      companyId: t.approval.companyId,
      actor: t.actor,
      action,
      entityType: "approval",
      entityId: t.approval.id,
      details: { type: t.approval.type, ...details },
    },
    t.now,
    transitionGuard(db, t),
  );
}

/**
 * hire_agent effects on the pending agent: approved → idle; rejected → terminated with every key
 * revoked (they answer 401 from the next request on). Only an agent still pending_approval changes.
 */
export function hireEffects(db: Db, t: Transition, agent: AgentRow): Statement[] {
  const guard = transitionGuard(db, t);
  const pending = and(eq(agents.id, agent.id), eq(agents.status, "pending_approval"), guard);
  const approved = t.status === "approved";
  const statements: Statement[] = approved
    ? [db.update(agents).set({ status: "idle", updatedAt: t.now }).where(pending)]
    : [
        db
          .update(agents)
          .set({ status: "terminated", pauseReason: null, terminatedAt: t.now, updatedAt: t.now })
          .where(pending),
        db
          .update(agentApiKeys)
          .set({ revokedAt: t.now })
          .where(and(eq(agentApiKeys.agentId, agent.id), isNull(agentApiKeys.revokedAt), guard)),
      ];
  statements.push(
    ...guardedActivity(
      db,
      {
        companyId: agent.companyId,
        actor: t.actor,
        action: approved ? "agent.hire_approved" : "agent.hire_rejected",
        entityType: "agent",
        entityId: agent.id,
        details: { approvalId: t.approval.id, from: agent.status, to: approved ? "idle" : "terminated" },
      },
      t.now,
      guard,
    ),
  );
  return statements;
}

/**
 * Wakes the agent that asked for the approval with the approval's id and new status (they reach its
 * run as PLATFORM_APPROVAL_ID / PLATFORM_APPROVAL_STATUS). A refused wake is still recorded.
 */
export function requesterWake(
  db: Db,
  t: Transition,
  requester: AgentRow,
  reason: string,
): { run: HeartbeatRunRow; statements: Statement[] } {
  const run = wakeRun(
    requester,
    {
      source: "approval",
      reason,
      approvalId: t.approval.id,
      approvalStatus: t.status,
      requestedBy: t.actor,
    },
    t.now,
  );
  return {
    run,
    statements: [
      wakeInsert(db, run),
      db.delete(heartbeatRuns).where(and(eq(heartbeatRuns.id, run.id), not(transitionGuard(db, t)))),
    ],
  };
}
