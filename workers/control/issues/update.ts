import { eq } from "drizzle-orm";
import { guardedBy } from "../../auth/credential-guard";
import type { Db } from "../../db/client";
import { type MaybeRead, readTogether } from "../../db/read-batch";
import { ISSUE_PRIORITIES, type IssueRow, type IssueStatus, issueLabels, issues } from "../../db/schema";
import { unprocessable } from "../../http/errors";
import { assertCeoMayStartWork } from "../approvals/records";
import { assignmentDraft, notificationIdsOf, notificationInserts, recipientsOf } from "../people";
import { activityInsert } from "../shared";
import { assigneeOfIssueRead, assignmentWake, companyAgentRead, wakeInsert } from "../wakes";
import { blockerIdsRead, commitNotingDependents, planBlockers } from "./blockers";
import { assertMayCancel } from "./cancel";
import { commentContext, commentReads, commentWrites } from "./comment";
import { commentResource } from "./comment-resource";
import type { IssueLocation } from "./locator";
import type { IssueOpCompanions, IssueOpHandler, IssuePatch } from "./operations";
import { assertOneAssignee, checkReferences, type IssueReferences } from "./refs";
import { issueResource } from "./resource";
import { commitBatch, labelIdsOf, type Statement } from "./store";
import { allowedUpdateTargets, isAllowedUpdateTransition, transitionTimestamps } from "./transitions";

/** The columns a PATCH may change (besides status and its timestamps). */
type Changes = Partial<
  Pick<
    IssueRow,
    | "title"
    | "description"
    | "status"
    | "priority"
    | "priorityRank"
    | "assigneeAgentId"
    | "assigneeUserId"
    | "parentId"
    | "projectId"
    | "goalId"
    | "dueDate"
    | "startedAt"
    | "completedAt"
    | "cancelledAt"
    | "checkoutRunId"
  >
>;

/** Field names the activity row lists; timestamps and the rank follow from them. */
const DERIVED = new Set(["priorityRank", "startedAt", "completedAt", "cancelledAt", "checkoutRunId"]);

function transitionError(from: IssueStatus, to: IssueStatus) {
  const allowed = allowedUpdateTargets(from);
  const detail =
    from === "todo" && to === "in_progress"
      ? "todo → in_progress happens only through checkout: use POST /api/issues/{issueId}/checkout"
      : `Cannot move an issue from ${from} to ${to}`;
  return unprocessable(detail, { from, to, allowed });
}

/** The assignee columns after the patch: setting one assignee clears the other. */
function assigneeChanges(input: IssuePatch): Changes {
  const changes: Changes = {};
  if (input.assigneeAgentId !== undefined) {
    changes.assigneeAgentId = input.assigneeAgentId;
    if (input.assigneeAgentId !== null) changes.assigneeUserId = null;
  }
  if (input.assigneeUserId !== undefined) {
    changes.assigneeUserId = input.assigneeUserId;
    if (input.assigneeUserId !== null) changes.assigneeAgentId = null;
  }
  return changes;
}

/** Every column the patch sets to a new value, status moves checked against the table. */
function plannedChanges(issue: IssueRow, input: IssuePatch, now: number): Changes {
  const wanted: Changes = {
    title: input.title,
    description: input.description,
    priority: input.priority,
    parentId: input.parentId,
    projectId: input.projectId,
    goalId: input.goalId,
    dueDate: input.dueDate,
    ...assigneeChanges(input),
  };
  const changes: Changes = {};
  for (const [key, value] of Object.entries(wanted) as Array<[keyof Changes, unknown]>) {
    if (value !== undefined && value !== issue[key]) Object.assign(changes, { [key]: value });
  }
  if (changes.priority) changes.priorityRank = ISSUE_PRIORITIES.indexOf(changes.priority);
  const from = issue.status;
  const to = input.status ?? from;
  if (to !== from) {
    if (!isAllowedUpdateTransition(from, to)) throw transitionError(from, to);
    Object.assign(changes, { status: to }, transitionTimestamps(from, to, now));
    // A cancelled issue is nobody's work any more: the run that checked it out no longer holds it.
    if (to === "cancelled" && issue.checkoutRunId !== null) changes.checkoutRunId = null;
  }
  return changes;
}

/** in_progress needs someone doing the work, whichever way the issue got (or stays) there. */
function assertAssignedWhenInProgress(issue: IssueRow, changes: Changes): void {
  const touched = "status" in changes || "assigneeAgentId" in changes || "assigneeUserId" in changes;
  const next = { ...issue, ...changes };
  if (touched && next.status === "in_progress" && !next.assigneeAgentId && !next.assigneeUserId)
    throw unprocessable("An in_progress issue needs an assignee (assigneeAgentId or assigneeUserId)", {
      field: "status",
    });
}

/** Only ids that change need checking (an unchanged assignee may since have been paused, say). */
function referencesToCheck(input: IssuePatch, changes: Changes): IssueReferences {
  return {
    assigneeAgentId: changes.assigneeAgentId,
    assigneeUserId: changes.assigneeUserId,
    parentId: changes.parentId,
    projectId: changes.projectId,
    goalId: changes.goalId,
    labelIds: input.labelIds,
  };
}

function labelStatements(db: Db, issue: IssueRow, labelIds: string[]): Statement[] {
  const statements: Statement[] = [db.delete(issueLabels).where(eq(issueLabels.issueId, issue.id))];
  if (labelIds.length > 0)
    statements.push(
      db
        .insert(issueLabels)
        .values(labelIds.map((labelId) => ({ issueId: issue.id, labelId, companyId: issue.companyId }))),
    );
  return statements;
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((value) => b.includes(value));

/** The agent a PATCH leaves assigned, unsent: the one it names, else the row's (joined through it). */
function nextAssigneeRead(db: Db, at: IssueLocation, input: IssuePatch): MaybeRead {
  if (input.assigneeAgentId === undefined) return assigneeOfIssueRead(db, at.id);
  return input.assigneeAgentId === null ? null : companyAgentRead(db, at.companyId, input.assigneeAgentId);
}

/**
 * What a PATCH reads before it writes, read with the issue's row (`IssueOpCompanions`): the issue's
 * blockers and labels now, and for a comment what any comment reads (`commentReads`), with the
 * assignee as the PATCH leaves the issue.
 */
export const updateCompanions: IssueOpCompanions<"update"> = (db, at, { input, actor }) => [
  blockerIdsRead(db, at.id),
  labelIdsOf(db, at.id),
  ...(input.comment === undefined
    ? []
    : commentReads(db, at, input.comment, actor, nextAssigneeRead(db, at, input))),
];

/** The companions' answers, named; `next` is the issue as the PATCH leaves it. */
function updateReads(answers: Array<unknown[] | null>, next: IssueRow) {
  const [blockerRows, labelRows, ...forComment] = answers;
  return {
    blockerIds: ((blockerRows ?? []) as Array<{ id: string }>).map((row) => row.id),
    labelIds: ((labelRows ?? []) as Array<{ labelId: string }>).map((row) => row.labelId),
    comment: commentContext(forComment, next),
  };
}

/**
 * PATCH /issues/:id, inside the IssueDO: field changes, a status move from the transition table,
 * label replacement and an optional comment (with its mention wakes), committed as one batch with
 * their activity rows. Any rule broken answers 4xx before anything is written.
 */
export const updateIssue: IssueOpHandler<"update"> = async ({ db, issue, op, now, companions }) => {
  const { input, actor } = op;
  assertOneAssignee(input);
  const changes = plannedChanges(issue, input, now);
  if (changes.status === "cancelled") await assertMayCancel(db, issue, actor);
  // The CEO starts work only once the board approved its strategy (approve_ceo_strategy).
  if (changes.status === "in_progress") await assertCeoMayStartWork(db, actor);
  await checkReferences(db, issue.companyId, referencesToCheck(input, changes), issue.id);
  assertAssignedWhenInProgress(issue, changes);
  const next: IssueRow = { ...issue, ...changes };
  const reads = updateReads(companions ?? (await readTogether(db, updateCompanions(db, issue, op))), next);
  const blockers = await planBlockers(db, {
    issue,
    wanted: input.blockedByIssueIds,
    current: reads.blockerIds,
    nextStatus: changes.status ?? issue.status,
    comment: input.comment,
    actor,
    now,
  });

  const currentLabels = reads.labelIds;
  const nextLabels = input.labelIds ? [...new Set(input.labelIds)] : currentLabels;
  const labelsChanged = !sameSet(currentLabels, nextLabels);
  const changed = [
    ...Object.keys(changes).filter((key) => !DERIVED.has(key)),
    ...(labelsChanged ? ["labelIds"] : []),
    ...(blockers.changed ? ["blockedByIssueIds"] : []),
  ];

  const statements: Statement[] = [];
  if (changed.length > 0 || input.comment !== undefined) {
    next.updatedAt = now;
    statements.push(
      db
        .update(issues)
        .set({ ...changes, updatedAt: now })
        .where(eq(issues.id, issue.id)),
    );
  }
  if (labelsChanged) statements.push(...labelStatements(db, issue, nextLabels));
  statements.push(...blockers.statements);
  if (changed.length > 0) {
    const status = changes.status ? { status: { from: issue.status, to: changes.status } } : {};
    statements.push(
      activityInsert(
        db,
        {
          companyId: issue.companyId,
          actor,
          action: "issue.updated",
          entityType: "issue",
          entityId: issue.id,
          details: { identifier: issue.identifier, changes: changed, ...status },
        },
        now,
      ),
    );
  }
  const assigned = await assignmentWake(db, {
    issueId: issue.id,
    companyId: issue.companyId,
    agentId: next.assigneeAgentId,
    previousAgentId: issue.assigneeAgentId,
    status: next.status,
    actor,
    now,
  });
  if (assigned) statements.push(wakeInsert(db, assigned));
  const handedOver = assignmentDraft({
    companyId: issue.companyId,
    issueId: issue.id,
    previousUserId: issue.assigneeUserId,
    nextUserId: next.assigneeUserId,
    actor,
  });
  statements.push(...notificationInserts(db, handedOver, now));
  const comment =
    input.comment === undefined
      ? undefined
      : commentWrites(db, {
          issue: next,
          actor,
          body: input.comment,
          now,
          companyAgents: reads.comment.companyAgents,
          companyMembers: reads.comment.companyMembers,
          assignee: reads.comment.assignee,
          alreadyWoken: assigned ? [assigned.agentId] : [],
        });
  if (comment) statements.push(...comment.statements);
  let dependentIds: string[] | undefined;
  // The request's credential guard, if any, rides in the commit (auth/credential-guard.ts).
  if (next.status === issue.status) await commitBatch(db, statements, op.guard);
  else
    ({ dependentIds } = await commitNotingDependents(db, issue.id, [
      ...statements,
      ...guardedBy(db, op.guard),
    ]));

  const body = { ...issueResource(next), labelIds: nextLabels, blockedByIssueIds: blockers.ids };
  return {
    status: 200,
    body: comment ? { ...body, comment: commentResource(comment.comment, reads.comment.authorName) } : body,
    queuedRuns: Boolean(comment?.queuedRuns) || assigned?.status === "queued" || blockers.queuedRuns,
    notifiedUserIds: [...new Set([...recipientsOf(handedOver), ...(comment?.notifiedUserIds ?? [])])],
    notificationIds: [...notificationIdsOf(handedOver), ...(comment?.notificationIds ?? [])],
    dependentIds,
  };
};
