import { and, eq, isNull, or, sql } from "drizzle-orm";
import { guardedBy } from "../../auth/credential-guard";
import { type ActorRef, activityActor } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { activityLog, agents, type IssueRow, type IssueStatus, issues } from "../../db/schema";
import { conflict, unprocessable } from "../../http/errors";
import { assertCeoMayStartWork } from "../approvals/records";
import { redactSecrets } from "../shared";
import { assertNoUnresolvedBlockers, commitNotingDependents, noUnresolvedBlockers } from "./blockers";
import type { IssueOpContext, IssueOpHandler, IssueOpResult } from "./operations";
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
 * `updated_at` it stamped, its company), so a claim that did not happen leaves no log entry either.
 */
function checkoutActivity(db: Db, issueId: string, actor: ActorRef, agentId: string, now: number) {
  const { actorType, actorId } = activityActor(actor);
  const details = redactSecrets({ agentId, previousStatus: CHECKOUT_FROM });
  // Columns in the table's order (drizzle's insert-select lists them all); NULL: the log numbers it.
  return db.insert(activityLog).select(sql`
    SELECT NULL, ${newId()}, company_id, ${actorType}, ${actorId}, 'issue.checked_out', 'issue',
      ${issueId}, ${JSON.stringify(details)}, ${now}
    FROM issues
    WHERE id = ${issueId} AND status = 'in_progress' AND assignee_agent_id = ${agentId}
      AND updated_at = ${now}`);
}

/**
 * The claim: todo → in_progress for `agentId`, only while nobody else holds it and no blocker is open.
 * Its `changes` count is the proof that this caller won.
 */
function claimStatement(db: Db, issueId: string, agentId: string, runId: string | null, now: number) {
  return db
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
}

/** The issue as a claim leaves it (`issue` as it was read before), for the answer. */
const claimedRow = (issue: IssueRow, agentId: string, now: number): IssueRow => ({
  ...issue,
  status: "in_progress",
  assigneeAgentId: agentId,
  assigneeUserId: null,
  startedAt: now,
  updatedAt: now,
});

/** Only an agent whose key did not prove a role other than CEO can be held back by the CEO gate. */
const mayMeetCeoGate = (actor: ActorRef): boolean =>
  actor.type === "agent" && (actor.role === undefined || actor.role === "ceo");

/**
 * Whether a checkout takes the one-batch claim (claimInOneTrip): only that path carries a credential
 * guard, so the route confirms the caller first when it will not (no IssueDO hop spent on a refusal).
 */
export const claimsInOneTrip = (actor: ActorRef, expectedStatuses: readonly IssueStatus[]): boolean =>
  expectedStatuses.includes(CHECKOUT_FROM) && !mayMeetCeoGate(actor);

/**
 * The common checkout in one D1 round trip, before the IssueDO reads the issue: one batch reads the
 * row as it was, claims it, logs the claim and reads the issues it blocks (for their pages' news).
 * `result` is null when the claim did not happen (not todo, held by another, an open blocker, gone);
 * the caller then runs `checkoutIssue` on the row this batch read, which answers the holder's repeat
 * or explains the refusal. Null altogether when this shortcut does not apply: `todo` not among the
 * expected statuses, or an actor the CEO gate must read for first. The request's credential guard,
 * if any, rides in the batch (a refusal fails the batch: nothing was committed, and
 * applyIssueOperation answers `unconfirmed`).
 */
export async function claimInOneTrip(
  db: Db,
  issueId: string,
  op: IssueOpContext<"checkout">["op"],
  now: number,
): Promise<{ issue: IssueRow | undefined; result: IssueOpResult | null } | null> {
  const { agentId, expectedStatuses, runId } = op.input;
  if (!claimsInOneTrip(op.actor, expectedStatuses)) return null;
  const { results, dependentIds } = await commitNotingDependents(db, issueId, [
    db.select().from(issues).where(eq(issues.id, issueId)),
    claimStatement(db, issueId, agentId, runId ?? null, now),
    checkoutActivity(db, issueId, op.actor, agentId, now),
    ...guardedBy(db, op.guard),
  ]);
  const [rows, claimed] = results as [IssueRow[], D1Result];
  const issue = rows[0];
  if (!issue || claimed.meta.changes !== 1) return { issue, result: null };
  return {
    issue,
    result: { status: 200, body: issueResource(claimedRow(issue, agentId, now)), dependentIds },
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

  const { results, dependentIds } = await commitNotingDependents(db, issue.id, [
    claimStatement(db, issue.id, agentId, op.input.runId ?? null, now),
    checkoutActivity(db, issue.id, op.actor, agentId, now),
  ]);
  const [claimed] = results as [D1Result];
  if (claimed.meta.changes !== 1) {
    // An open blocker (the 422 names them), or someone wrote the row outside the queue: answer from
    // what is there now.
    await assertNoUnresolvedBlockers(db, issue.id);
    const current = await db.select().from(issues).where(eq(issues.id, issue.id)).get();
    throw await checkoutConflict(db, current ?? issue);
  }
  return { status: 200, body: issueResource(claimedRow(issue, agentId, now)), dependentIds };
};
