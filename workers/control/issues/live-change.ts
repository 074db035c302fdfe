import type { Db } from "../../db/client";
import type { IssueRow } from "../../db/schema";
import type { LiveChange } from "../live";
import { dependentIdsOf } from "./blockers";
import type { IssueOperation, JsonValue } from "./operations";

type JsonObject = { [key: string]: JsonValue };

const objectOf = (value: JsonValue | undefined): JsonObject | null =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? value : null;

const stringOf = (value: JsonValue | undefined): string | undefined =>
  typeof value === "string" ? value : undefined;

const idOrNull = (value: JsonValue | undefined): string | null | undefined =>
  typeof value === "string" || value === null ? value : undefined;

/** The issue's visible fields after the change: from the answer when it is the issue, else as read. */
function issueFields(issue: IssueRow, body: JsonValue) {
  const answered = objectOf(body);
  const isIssue = answered !== null && answered.id === issue.id && typeof answered.status === "string";
  return {
    status: (isIssue && stringOf(answered.status)) || issue.status,
    title: (isIssue && stringOf(answered.title)) || issue.title,
    assigneeAgentId: isIssue ? (idOrNull(answered.assigneeAgentId) ?? null) : issue.assigneeAgentId,
    assigneeUserId: isIssue ? (idOrNull(answered.assigneeUserId) ?? null) : issue.assigneeUserId,
  };
}

/** What the issue's live feed announces after `op` committed (`issue` as read before it, `body` the answer). */
export function liveChangeOf(op: IssueOperation, issue: IssueRow, body: JsonValue): LiveChange {
  const where = { companyId: issue.companyId, issueId: issue.id };
  switch (op.kind) {
    case "comment":
      return { kind: "comment.added", ...where, commentId: stringOf(objectOf(body)?.id) ?? "" };
    case "delete":
      return { kind: "issue.deleted", ...where };
    case "putDocument":
    case "deleteDocument":
      return { kind: "document.changed", ...where, key: op.key };
    case "askQuestion":
    case "answerQuestion":
      return { kind: "question.changed", ...where, questionId: stringOf(objectOf(body)?.id) ?? "" };
    default:
      return { kind: "issue.updated", ...where, ...issueFields(issue, body) };
  }
}

export type BlockerChange = Extract<LiveChange, { kind: "blocker.changed" }>;

/**
 * A status change is news on the pages of the issues this one blocks (they list their blockers with
 * their statuses). Read after the commit; a failed read costs those pages the news, never the change.
 */
export async function blockerChangesOf(
  db: Db,
  issue: IssueRow,
  change: LiveChange,
  /** Read in the write's own batch, when the operation did (checkout, update). */
  knownDependents?: string[],
): Promise<BlockerChange[]> {
  if (change.kind !== "issue.updated" || change.status === undefined || change.status === issue.status)
    return [];
  const status = change.status;
  try {
    const dependents = knownDependents ?? (await dependentIdsOf(db, issue.id));
    return dependents.map((issueId) => ({
      kind: "blocker.changed",
      companyId: issue.companyId,
      issueId,
      blockerIssueId: issue.id,
      status,
    }));
  } catch (error) {
    console.error(
      JSON.stringify({ level: "error", msg: "blocker dependents read failed", error: String(error) }),
    );
    return [];
  }
}
