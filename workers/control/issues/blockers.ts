import { and, eq, inArray, notInArray, sql } from "drizzle-orm";
import type { ActorRef } from "../../core/actor";
import type { Db } from "../../db/client";
import {
  agents,
  approvals,
  type HeartbeatRunRow,
  type IssueRow,
  issueApprovals,
  issueBlockers,
  issues,
} from "../../db/schema";
import { unprocessable } from "../../http/errors";
import { wakeInsert, wakeRun } from "../wakes";
import { hasPendingQuestion } from "./questions";
import type { Statement } from "./store";
import { TERMINAL_STATUSES } from "./transitions";

/**
 * blockedByIssueIds: "this issue waits for those". A blocker is resolved once it is done or cancelled.
 * Links stay when a blocker resolves (the history of why the issue waited); only a PATCH replaces them.
 */

/** Far enough for any real dependency chain; bounded so a corrupt graph still ends. */
const CYCLE_SEARCH_DEPTH = 1000;

const RESOLVED = TERMINAL_STATUSES;

export const blockerIdsOf = async (db: Db, issueId: string): Promise<string[]> =>
  (await blockerIdsRead(db, issueId)).map((row) => row.id);

/** The same read unsent (rows `{id}`), to join a batch of reads (db/read-batch.ts). */
export const blockerIdsRead = (db: Db, issueId: string) =>
  db
    .select({ id: issueBlockers.blockerIssueId })
    .from(issueBlockers)
    .where(eq(issueBlockers.issueId, issueId))
    .orderBy(issueBlockers.createdAt, issueBlockers.blockerIssueId);

const dependentsQuery = (db: Db, issueId: string) =>
  db
    .select({ id: issueBlockers.issueId })
    .from(issueBlockers)
    .where(eq(issueBlockers.blockerIssueId, issueId));

/** The issues that list `issueId` among their blockers. */
export const dependentIdsOf = async (db: Db, issueId: string): Promise<string[]> =>
  (await dependentsQuery(db, issueId)).map((row) => row.id);

/**
 * Commits a write that changes the issue's status and, in the same round trip, reads which issues it
 * blocks (their pages hear of the new status: live-change.ts `blockerChangesOf`; the write does not
 * change links, so the read's place in the batch does not matter). Returns the statements' results.
 */
export async function commitNotingDependents(
  db: Db,
  issueId: string,
  statements: Statement[],
): Promise<{ results: unknown[]; dependentIds: string[] }> {
  const [dependents, ...results] = await db.batch([dependentsQuery(db, issueId), ...statements]);
  return { results, dependentIds: dependents.map((row) => row.id) };
}

/**
 * "No blocker of `issueId` is still open", as SQL for a guarded write's WHERE: checkout claims in the
 * same statement that checks, and reads the blockers only to explain a claim that did not happen.
 */
export const noUnresolvedBlockers = (issueId: string) => sql`NOT EXISTS (
  SELECT 1 FROM issue_blockers link JOIN issues blocker ON blocker.id = link.blocker_issue_id
  WHERE link.issue_id = ${issueId}
    AND blocker.status NOT IN (${sql.join(
      RESOLVED.map((status) => sql`${status}`),
      sql`, `,
    )}))`;

/** Which of these issues are not yet done or cancelled. */
export async function unresolvedOf(db: Db, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .select({ id: issues.id })
    .from(issues)
    .where(and(inArray(issues.id, [...ids]), notInArray(issues.status, [...RESOLVED])));
  return rows.map((row) => row.id);
}

/** Whether `issueId` is reachable from `blockerIds` through blocker links: the new links would close a loop. */
async function closesLoop(db: Db, issueId: string, blockerIds: readonly string[]): Promise<boolean> {
  const seeds = sql.join(
    blockerIds.map((id) => sql`SELECT ${id}, 0`),
    sql` UNION ALL `,
  );
  const hit = await db.get<{ found: number } | undefined>(sql`
    WITH RECURSIVE down(id, depth) AS (
      ${seeds}
      UNION
      SELECT b.blocker_issue_id, down.depth + 1 FROM down JOIN issue_blockers b ON b.issue_id = down.id
      WHERE down.depth < ${CYCLE_SEARCH_DEPTH}
    )
    SELECT 1 AS found FROM down WHERE id = ${issueId} LIMIT 1`);
  return hit !== undefined && hit !== null;
}

/**
 * Every blocker must be an issue of the same company (another company's id is as unknown as a
 * made-up one: 422 naming the field, like every other reference), not the issue itself, and not one
 * that (transitively) waits for this issue. `selfId`: the issue being updated; a create has no
 * dependents yet, so it cannot close a loop.
 */
export async function checkBlockers(db: Db, companyId: string, ids: readonly string[], selfId?: string) {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return;
  if (selfId !== undefined && wanted.includes(selfId))
    throw unprocessable("blockedByIssueIds: an issue cannot block itself", { field: "blockedByIssueIds" });
  const found = await db
    .select({ id: issues.id })
    .from(issues)
    .where(and(inArray(issues.id, wanted), eq(issues.companyId, companyId)));
  if (found.length !== wanted.length) {
    const known = new Set(found.map((row) => row.id));
    throw unprocessable("blockedByIssueIds: no such issue in this company", {
      field: "blockedByIssueIds",
      unknown: wanted.filter((id) => !known.has(id)),
    });
  }
  if (selfId !== undefined && (await closesLoop(db, selfId, wanted)))
    throw unprocessable("blockedByIssueIds: the issue would (transitively) block itself", {
      field: "blockedByIssueIds",
    });
}

/** The statements that make `ids` the issue's blockers (replacing any), for the caller's batch. */
export function blockerStatements(
  db: Db,
  issue: Pick<IssueRow, "id" | "companyId">,
  ids: readonly string[],
  now: number,
  replace: boolean,
): Statement[] {
  const wanted = [...new Set(ids)];
  const statements: Statement[] = [];
  if (replace) statements.push(db.delete(issueBlockers).where(eq(issueBlockers.issueId, issue.id)));
  if (wanted.length > 0)
    statements.push(
      db.insert(issueBlockers).values(
        wanted.map((blockerIssueId) => ({
          issueId: issue.id,
          blockerIssueId,
          companyId: issue.companyId,
          createdAt: now,
        })),
      ),
    );
  return statements;
}

/** Approvals linked to the issue that still await a decision. */
async function hasPendingApproval(db: Db, issueId: string): Promise<boolean> {
  const row = await db
    .select({ id: approvals.id })
    .from(issueApprovals)
    .innerJoin(approvals, eq(approvals.id, issueApprovals.approvalId))
    .where(
      and(eq(issueApprovals.issueId, issueId), inArray(approvals.status, ["pending", "revision_requested"])),
    )
    .get();
  return row !== undefined;
}

/**
 * "Blocked" must say what it waits for, or nobody knows when to pick the work up again: a comment in
 * the same PATCH (the spec's "marked blocked with a comment": a person or an outside answer needs no
 * record here), an unresolved blocker (after this update's blockedByIssueIds), an approval linked to
 * the issue that is still pending, or a question on it still waiting for its answer. Else 422, with
 * the blockers that were checked.
 */
export async function assertMayEnterBlocked(
  db: Db,
  issueId: string,
  blockerIds: readonly string[],
  comment: string | undefined,
) {
  if (comment !== undefined && comment.trim() !== "") return;
  if ((await unresolvedOf(db, blockerIds)).length > 0) return;
  if (await hasPendingApproval(db, issueId)) return;
  if (await hasPendingQuestion(db, issueId)) return;
  throw unprocessable(
    "Entering blocked requires a comment saying what the issue waits for (comment), an unresolved blocker (blockedByIssueIds), a pending approval linked to the issue or a pending question on it",
    { field: "status", blockedByIssueIds: [...blockerIds] },
  );
}

/**
 * Checkout starts the work, which a blocked-by issue cannot do yet: 422 naming the open blockers.
 */
export async function assertNoUnresolvedBlockers(db: Db, issueId: string) {
  const open = await unresolvedOf(db, await blockerIdsOf(db, issueId));
  if (open.length > 0)
    throw unprocessable("Issue is blocked by unresolved blockers", { unresolvedBlockerIssueIds: open });
}

/**
 * When `resolved` becomes done or cancelled: one `issue_blockers_resolved` wake for the assignee agent
 * of every open issue it blocked whose blockers are now all resolved (counting `resolved` as resolved,
 * since the read runs before the batch that resolves it commits). For the caller's batch.
 */
export async function unblockedWakes(
  db: Db,
  resolved: Pick<IssueRow, "id">,
  actor: ActorRef,
  now: number,
): Promise<HeartbeatRunRow[]> {
  const rows = await db.all<{ issue_id: string; agent_id: string }>(sql`
    SELECT i.id AS issue_id, i.assignee_agent_id AS agent_id
    FROM issue_blockers link JOIN issues i ON i.id = link.issue_id
    WHERE link.blocker_issue_id = ${resolved.id}
      AND i.assignee_agent_id IS NOT NULL AND i.status NOT IN ('done', 'cancelled')
      AND NOT EXISTS (
        SELECT 1 FROM issue_blockers other JOIN issues b ON b.id = other.blocker_issue_id
        WHERE other.issue_id = i.id AND other.blocker_issue_id <> ${resolved.id}
          AND b.status NOT IN ('done', 'cancelled'))`);
  if (rows.length === 0) return [];
  const found = await db
    .select()
    .from(agents)
    .where(inArray(agents.id, [...new Set(rows.map((row) => row.agent_id))]));
  const byId = new Map(found.map((agent) => [agent.id, agent]));
  return rows.flatMap((row) => {
    const agent = byId.get(row.agent_id);
    if (!agent) return [];
    const wake = {
      source: "dependency",
      reason: "issue_blockers_resolved",
      issueId: row.issue_id,
      requestedBy: actor,
    };
    return [wakeRun(agent, wake, now)];
  });
}

export interface BlockerPlan {
  /** The issue's blockers after the update. */
  ids: string[];
  changed: boolean;
  /** Link replacement and the dependents' wakes, for the update's batch. */
  statements: Statement[];
  queuedRuns: boolean;
}

/**
 * The blocker side of a PATCH: checks new blockedByIssueIds, enforces "blocked needs a reason" when
 * the status enters blocked, and wakes dependents when the status resolves the issue. Throws 4xx
 * before anything is written.
 */
export async function planBlockers(
  db: Db,
  input: {
    issue: IssueRow;
    wanted: string[] | undefined;
    /** Its blockers now (`blockerIdsRead`), read by the caller with its other reads. */
    current: string[];
    nextStatus: IssueRow["status"];
    /** The PATCH's comment, which may be the reason for entering blocked. */
    comment: string | undefined;
    actor: ActorRef;
    now: number;
  },
): Promise<BlockerPlan> {
  const { issue, wanted, current, now } = input;
  if (wanted !== undefined) await checkBlockers(db, issue.companyId, wanted, issue.id);
  const ids = wanted === undefined ? current : [...new Set(wanted)];
  const changed = ids.length !== current.length || ids.some((id) => !current.includes(id));
  const entering = (status: IssueRow["status"]) => input.nextStatus === status && issue.status !== status;
  if (entering("blocked")) await assertMayEnterBlocked(db, issue.id, ids, input.comment);
  const resolving = RESOLVED.includes(input.nextStatus) && !RESOLVED.includes(issue.status);
  const wakes = resolving ? await unblockedWakes(db, issue, input.actor, now) : [];
  return {
    ids,
    changed,
    statements: [
      ...(changed ? blockerStatements(db, issue, ids, now, true) : []),
      ...wakes.map((run) => wakeInsert(db, run)),
    ],
    queuedRuns: wakes.some((run) => run.status === "queued"),
  };
}
