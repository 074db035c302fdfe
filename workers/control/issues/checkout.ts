import { and, eq, isNull, or, sql } from "drizzle-orm";
import { type ActorRef, activityActor } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { activityLog, agents, type IssueRow, type IssueStatus, issues } from "../../db/schema";
import { conflict, unprocessable } from "../../http/errors";
import { assertCeoMayStartWork } from "../approvals/records";
import { redactSecrets } from "../shared";
import { assertNoUnresolvedBlockers, commitNotingDependents, noUnresolvedBlockers } from "./blockers";
import type { IssueOpHandler } from "./operations";
import { issueResource } from "./resource";

/** The spec's only checkout row: todo → in_progress. */
const CHECKOUT_FROM: IssueStatus = "todo";

/**
 * The 409 every losing claimant gets. It names the holder (id and name), so an agent told "do not
 * retry, pick another issue" can also tell its manager who has the work.
 */
async function checkoutConflict(db: Db, issue: IssueRow) {
  const holder = issue.assigneeAgentId
    ? ((await db
        .select({ id: agents.id, name: agents.name })
        .from(agents)
        .where(eq(agents.id, issue.assigneeAgentId))
        .get()) ?? { id: issue.assigneeAgentId, name: null })
    : null;
  return conflict("Issue checkout conflict", {
    issueId: issue.id,
    status: issue.status,
    assigneeAgentId: issue.assigneeAgentId,
    holder,
  });
}

/**
 * The activity row of a checkout, written only if the guarded UPDATE before it in the same batch
 * took effect: it selects from the issue as that UPDATE leaves it (status, assignee and the exact
 * `updated_at` it stamped), so a claim that did not happen leaves no log entry either.
 */
function checkoutActivity(db: Db, issue: IssueRow, actor: ActorRef, agentId: string, now: number) {
  const { actorType, actorId } = activityActor(actor);
  const details = redactSecrets({ agentId, previousStatus: issue.status });
  // Columns in the table's order (drizzle's insert-select lists them all); NULL: the log numbers it.
  return db.insert(activityLog).select(sql`
    SELECT NULL, ${newId()}, ${issue.companyId}, ${actorType}, ${actorId}, 'issue.checked_out', 'issue',
      ${issue.id}, ${JSON.stringify(details)}, ${now}
    FROM issues
    WHERE id = ${issue.id} AND status = 'in_progress' AND assignee_agent_id = ${agentId}
      AND updated_at = ${now}`);
}

/**
 * Atomic claim and start. The IssueDO already runs this alone, so the checks below see the issue as
 * it is; the conditional UPDATE repeats the claim condition in SQL as a second guard, checks that no
 * blocker is open (blockers are other issues' rows, so only SQL sees them as they are now), and its
 * `changes` count is the proof that this caller won.
 */
export const checkoutIssue: IssueOpHandler<"checkout"> = async ({ db, issue, op, now }) => {
  const { agentId, expectedStatuses } = op.input;
  // Idempotent for the owner, whatever it expected: it already holds the issue.
  if (issue.status === "in_progress" && issue.assigneeAgentId === agentId) {
    return { status: 200, body: issueResource(issue) };
  }
  if (issue.assigneeAgentId !== null && issue.assigneeAgentId !== agentId) {
    throw await checkoutConflict(db, issue);
  }
  if (!expectedStatuses.includes(issue.status)) throw await checkoutConflict(db, issue);
  if (issue.status !== CHECKOUT_FROM) {
    throw unprocessable(`Checkout moves only ${CHECKOUT_FROM} issues to in_progress`, {
      status: issue.status,
      allowedFrom: [CHECKOUT_FROM],
    });
  }
  // The CEO starts work only once the board approved its strategy (approve_ceo_strategy).
  await assertCeoMayStartWork(db, op.actor);

  const claim = db
    .update(issues)
    .set({
      status: "in_progress",
      assigneeAgentId: agentId,
      assigneeUserId: null,
      checkoutRunId: op.input.runId ?? null,
      startedAt: now,
      updatedAt: now,
    })
    .where(
      and(
        eq(issues.id, issue.id),
        eq(issues.status, issue.status),
        or(isNull(issues.assigneeAgentId), eq(issues.assigneeAgentId, agentId)),
        noUnresolvedBlockers(issue.id),
      ),
    );
  const { results, dependentIds } = await commitNotingDependents(db, issue.id, [
    claim,
    checkoutActivity(db, issue, op.actor, agentId, now),
  ]);
  const [claimed] = results as [D1Result];
  if (claimed.meta.changes !== 1) {
    // An open blocker (the 422 names them), or someone wrote the row outside the queue: answer from
    // what is there now.
    await assertNoUnresolvedBlockers(db, issue.id);
    const current = await db.select().from(issues).where(eq(issues.id, issue.id)).get();
    throw await checkoutConflict(db, current ?? issue);
  }
  return {
    status: 200,
    body: issueResource({
      ...issue,
      status: "in_progress",
      assigneeAgentId: agentId,
      assigneeUserId: null,
      startedAt: now,
      updatedAt: now,
    }),
    dependentIds,
  };
};
