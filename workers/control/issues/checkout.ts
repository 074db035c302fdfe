import { and, eq, isNull, or, sql } from "drizzle-orm";
import { type ActorRef, activityActor } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { activityLog, agents, type IssueRow, type IssueStatus, issues } from "../../db/schema";
import { conflict, unprocessable } from "../../http/errors";
import { assertCeoMayStartWork } from "../approvals/records";
import { redactSecrets } from "../shared";
import { assertNoUnresolvedBlockers, commitNotingDependents, noUnresolvedBlockers } from "./blockers";
import type { IssueOperation, IssueOpHandler, IssueOpResult } from "./operations";
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
 * `updated_at` it stamped), so a claim that did not happen leaves no log entry either. The company
 * is the row's own, so the claim needs no read of the issue first.
 */
function checkoutActivity(
  db: Db,
  issueId: string,
  actor: ActorRef,
  agentId: string,
  previousStatus: IssueStatus,
  now: number,
) {
  const { actorType, actorId } = activityActor(actor);
  const details = redactSecrets({ agentId, previousStatus });
  // Columns in the table's order (drizzle's insert-select lists them all); NULL: the log numbers it.
  return db.insert(activityLog).select(sql`
    SELECT NULL, ${newId()}, company_id, ${actorType}, ${actorId}, 'issue.checked_out', 'issue',
      ${issueId}, ${JSON.stringify(details)}, ${now}
    FROM issues
    WHERE id = ${issueId} AND status = 'in_progress' AND assignee_agent_id = ${agentId}
      AND updated_at = ${now}`);
}

/** The claim: in_progress for `agentId`, if the row still says what `where` expects. */
const claimUpdate = (db: Db, issueId: string, agentId: string, runId: string | null, now: number) =>
  db
    .update(issues)
    .set({
      status: "in_progress",
      assigneeAgentId: agentId,
      assigneeUserId: null,
      checkoutRunId: runId,
      startedAt: now,
      updatedAt: now,
    })
    .where(
      and(
        eq(issues.id, issueId),
        eq(issues.status, CHECKOUT_FROM),
        or(isNull(issues.assigneeAgentId), eq(issues.assigneeAgentId, agentId)),
        noUnresolvedBlockers(issueId),
      ),
    );

type CheckoutOp = Extract<IssueOperation, { kind: "checkout" }>;

/**
 * Whether the CEO gate (assertCeoMayStartWork) may apply: an agent whose key did not prove another
 * role. Such a checkout takes the path that reads first, so the gate's refusal comes after the
 * conflict checks as it always has.
 */
const mayBeCeo = (actor: ActorRef): boolean =>
  actor.type === "agent" && (actor.role === undefined || actor.role === "ceo");

/**
 * The common checkout without reading the row first (issue 31: one D1 round trip instead of two in
 * the IssueDO). The claim's guarded UPDATE holds every condition of a checkout that succeeds (todo,
 * unassigned or already the claimant's, no open blocker) and answers the row it left; the activity
 * row and the dependents read ride in the same batch. When it changes nothing, null: `apply` then
 * reads the row and `checkoutIssue` tells a repeat by the holder, a conflict and a refusal apart.
 * The answer's `issue` is the row before the claim as far as what follows needs it (id, company,
 * status: the claim moved it from todo).
 */
export async function checkoutWithoutRead(
  db: Db,
  issueId: string,
  op: CheckoutOp,
  now: number,
): Promise<{ issue: IssueRow; result: IssueOpResult } | null> {
  const { agentId, expectedStatuses } = op.input;
  if (!expectedStatuses.includes(CHECKOUT_FROM) || mayBeCeo(op.actor)) return null;
  const claim = claimUpdate(db, issueId, agentId, op.input.runId ?? null, now).returning();
  const { results, dependentIds } = await commitNotingDependents(db, issueId, [
    claim,
    checkoutActivity(db, issueId, op.actor, agentId, CHECKOUT_FROM, now),
  ]);
  const [claimed] = results as [IssueRow[]];
  const row = claimed[0];
  if (!row) return null;
  return {
    issue: { ...row, status: CHECKOUT_FROM },
    result: { status: 200, body: issueResource(row), dependentIds },
  };
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

  // Repeats the conditions checked above in SQL: a writer outside the queue may have moved the row.
  const claim = claimUpdate(db, issue.id, agentId, op.input.runId ?? null, now);
  const { results, dependentIds } = await commitNotingDependents(db, issue.id, [
    claim,
    checkoutActivity(db, issue.id, op.actor, agentId, issue.status, now),
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
