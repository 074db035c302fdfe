import { eq } from "drizzle-orm";
import { isGuardRefusal } from "../../auth/credential-guard";
import type { Db } from "../../db/client";
import { readTogether } from "../../db/read-batch";
import { type IssueRow, issues } from "../../db/schema";
import { ApiError } from "../../http/errors";
import type { LiveChange } from "../live";
import { linkApproval, unlinkApproval } from "./approval-links";
import { checkoutIssue, claimInOneTrip } from "./checkout";
import { addComment, commentCompanions } from "./comment";
import { deleteIssue } from "./delete";
import { deleteDocument, putDocument } from "./documents";
import { type BlockerChange, blockerChangesOf, liveChangeOf } from "./live-change";
import type { IssueLocation } from "./locator";
import type {
  IssueOpCompanions,
  IssueOpContext,
  IssueOperation,
  IssueOperationKind,
  IssueOpHandler,
  IssueOpResult,
  IssueOutcome,
} from "./operations";
import { answerQuestion, askQuestion } from "./questions";
import { releaseIssue } from "./release";
import { releaseRunLock } from "./release-run";
import { updateCompanions, updateIssue } from "./update";

const HANDLERS: { [K in IssueOperationKind]: IssueOpHandler<K> } = {
  update: updateIssue,
  checkout: checkoutIssue,
  release: releaseIssue,
  releaseRun: releaseRunLock,
  comment: addComment,
  delete: deleteIssue,
  putDocument,
  deleteDocument,
  linkApproval,
  unlinkApproval,
  askQuestion,
  answerQuestion,
};

/** Operations whose reads ride in the batch that reads the row (one D1 round trip less each). */
const COMPANIONS: { [K in IssueOperationKind]?: IssueOpCompanions<K> } = {
  update: updateCompanions,
  comment: commentCompanions,
};

/** The table's mapped type ties each handler to its kind; the lookup alone cannot express that. */
type AnyIssueOpHandler = (context: IssueOpContext<IssueOperationKind>) => Promise<IssueOpResult>;
type AnyIssueOpCompanions = IssueOpCompanions<IssueOperationKind>;

/**
 * The issue's row as it is now, with what the operation's companion reads answered, in one round
 * trip. A row of another company than the location says is no row: the object was asked by a
 * location the Worker resolved, and the reads were scoped to it.
 */
async function freshRow(db: Db, at: IssueLocation, op: IssueOperation) {
  const companions = COMPANIONS[op.kind] as AnyIssueOpCompanions | undefined;
  const [rows, ...answers] = await readTogether(db, [
    db.select().from(issues).where(eq(issues.id, at.id)).limit(1),
    ...(companions?.(db, at, op) ?? []),
  ]);
  const issue = rows?.[0] as IssueRow | undefined;
  if (!issue || issue.companyId !== at.companyId) return null;
  return { issue, companions: companions ? answers : undefined };
}

const EXPECTED_STATUSES = new Set([400, 403, 404, 409, 422]);

/** The operation's credential guard refused, or its path commits without one: nothing committed. */
const UNCONFIRMED: AppliedOutcome = {
  ok: false,
  status: 401,
  unconfirmed: true,
  error: "The caller's credential must be confirmed",
};

/**
 * An outcome as the IssueDO sees it: a committed change also says what its live feed announces, and
 * what the feeds of the issues it blocks announce (`relays`).
 */
export type AppliedOutcome = IssueOutcome & {
  change?: LiveChange;
  relays?: BlockerChange[];
  /** Users notified by the operation, announced on the company's feed. */
  notified?: { companyId: string; userIds: string[] };
};

/**
 * Reads the issue fresh (inside the DO's queue, so no other mutation of it is in flight), runs the
 * operation, and turns the expected failures into data. Anything else propagates as a 500.
 */
export async function applyIssueOperation(
  db: Db,
  at: IssueLocation,
  op: IssueOperation,
): Promise<AppliedOutcome> {
  try {
    const now = Date.now();
    // A checkout tries its claim in the batch that reads the row; the rest read the row first.
    const claim = op.kind === "checkout" ? await claimInOneTrip(db, at.id, op, now) : null;
    // A checkout's guard rides only in the claim's batch (an update's and a comment's, in their commit).
    if (op.kind === "checkout" && op.guard && claim === null) return UNCONFIRMED;
    const read = claim ? { issue: claim.issue, companions: undefined } : await freshRow(db, at, op);
    const issue = read?.issue;
    if (!issue) return { ok: false, status: 404, error: "Issue not found" };
    const companions = read?.companions;
    const handler = HANDLERS[op.kind] as AnyIssueOpHandler;
    const result = claim?.result ?? (await handler({ db, issue, op, now, companions }));
    const change = liveChangeOf(op, issue, result.body);
    return {
      ok: true,
      status: result.status,
      json: JSON.stringify(result.body),
      ...(result.queuedRuns ? { queuedRuns: true } : {}),
      ...(result.notificationIds?.length
        ? { notifications: { companyId: issue.companyId, ids: result.notificationIds } }
        : {}),
      change,
      relays: await blockerChangesOf(db, issue, change, result.dependentIds),
      ...(result.notifiedUserIds?.length
        ? { notified: { companyId: issue.companyId, userIds: result.notifiedUserIds } }
        : {}),
    };
  } catch (error) {
    if (isGuardRefusal(error)) return UNCONFIRMED;
    if (error instanceof ApiError && EXPECTED_STATUSES.has(error.status)) {
      return {
        ok: false,
        status: error.status as 400 | 403 | 404 | 409 | 422,
        error: error.detail ?? error.message,
        ...(error.details === undefined ? {} : { detailsJson: JSON.stringify(error.details) }),
      };
    }
    throw error;
  }
}
