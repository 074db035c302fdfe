import type { ActorRef, CredentialGuard } from "../../core/actor";
import type { Db } from "../../db/client";
import type { MaybeRead } from "../../db/read-batch";
import type { IssueRow, IssueStatus } from "../../db/schema";
import type { IssueLocation } from "./locator";

/** The PATCH body after validation (see workers/control/issues/routes/index.ts for the schema). */
export interface IssuePatch {
  title?: string;
  description?: string | null;
  status?: IssueStatus;
  priority?: "critical" | "high" | "medium" | "low";
  assigneeAgentId?: string | null;
  assigneeUserId?: string | null;
  parentId?: string | null;
  projectId?: string | null;
  goalId?: string | null;
  /** A calendar day, YYYY-MM-DD; null clears it. */
  dueDate?: string | null;
  labelIds?: string[];
  /** Replaces the issue's blockers. */
  blockedByIssueIds?: string[];
  /** Added as a comment in the same batch as the update. */
  comment?: string;
}

export interface DocumentPut {
  body: string;
  format: "markdown" | "text";
  title?: string | null;
  changeSummary?: string | null;
  baseRevisionId?: string;
}

/**
 * Everything that changes one existing issue. Each runs inside the issue's IssueDO, one at a time,
 * and commits with a single D1 batch.
 */
export type IssueOperation =
  | { kind: "update"; actor: ActorRef; input: IssuePatch; guard?: CredentialGuard }
  | {
      kind: "checkout";
      actor: ActorRef;
      /** runId: the heartbeat run whose run-scoped key checks out (its lock dies with the run). */
      input: { agentId: string; expectedStatuses: IssueStatus[]; runId?: string | null };
      /**
       * The request's credential guard (core/actor.ts), when its key was taken from the isolate's
       * recent answer: the claim's batch carries it, and any other path answers `unconfirmed`. An
       * update's and a comment's guard ride in their one commit.
       */
      guard?: CredentialGuard;
    }
  | { kind: "release"; actor: ActorRef }
  /** The system gives back an issue still held by a run that failed, timed out or lost its runner. */
  | { kind: "releaseRun"; runId: string; reason: string }
  | { kind: "comment"; actor: ActorRef; input: { body: string }; guard?: CredentialGuard }
  | { kind: "delete"; actor: ActorRef }
  | { kind: "putDocument"; actor: ActorRef; key: string; input: DocumentPut }
  | { kind: "deleteDocument"; actor: ActorRef; key: string }
  | { kind: "linkApproval"; actor: ActorRef; approvalId: string }
  | { kind: "unlinkApproval"; actor: ActorRef; approvalId: string }
  | { kind: "askQuestion"; actor: ActorRef; input: { body: string } }
  | {
      kind: "answerQuestion";
      actor: ActorRef;
      questionId: string;
      input: { answer: string };
      /** Set when the answer came from the company's line (control/line/answers). */
      via?: "whatsapp";
    };

export type IssueOperationKind = IssueOperation["kind"];

/** Plain JSON: what may cross the RPC boundary (and what the handlers' resources are). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * What crosses back from the IssueDO. Errors travel as data, not exceptions: an Error thrown across
 * RPC loses its class, and the status and details are the whole point. Bodies cross as JSON text:
 * the response needs nothing else, and a recursive JSON type is too deep for the RPC typings.
 */
export type IssueOutcome =
  | {
      ok: true;
      status: 200 | 201;
      json: string;
      queuedRuns?: boolean;
      /** Notifications it wrote (mentions, assignments): the company line tells their people. */
      notifications?: { companyId: string; ids: string[] };
    }
  | { ok: false; status: 400 | 403 | 404 | 409 | 422; error: string; detailsJson?: string }
  /** Nothing was committed: the Worker confirms the caller with the Keyring and asks again. */
  | { ok: false; status: 401; unconfirmed: true; error: string };

/** What an operation handler gets: the issue as read inside the DO's queue, fresh from D1. */
export interface IssueOpContext<K extends IssueOperationKind> {
  db: Db;
  issue: IssueRow;
  op: Extract<IssueOperation, { kind: K }>;
  now: number;
  /**
   * What the operation's companion reads (`IssueOpCompanions`) answered, read in the same round trip
   * as `issue`; absent when the caller read the row alone (the handler then reads them itself).
   */
  companions?: Array<unknown[] | null>;
}

/**
 * Reads an operation needs that depend only on where the issue is and on the operation, not on the
 * row's contents (or reach them through the row in SQL): sent in the batch that reads the row, so
 * the operation costs one D1 round trip less. Answers come back in this order, a null read as null.
 */
export type IssueOpCompanions<K extends IssueOperationKind> = (
  db: Db,
  at: IssueLocation,
  op: Extract<IssueOperation, { kind: K }>,
) => MaybeRead[];

/** A handler commits with one `db.batch` and returns the success body; failures throw ApiError. */
export type IssueOpHandler<K extends IssueOperationKind> = (
  context: IssueOpContext<K>,
) => Promise<IssueOpResult>;

/** `queuedRuns`: the operation queued a heartbeat run, so runners should be nudged after the commit. */
export interface IssueOpResult {
  status: 200 | 201;
  body: JsonValue;
  queuedRuns?: boolean;
  /** Users the operation notified (mention, assignment): their open pages hear of it after the commit. */
  notifiedUserIds?: string[];
  /** The notification rows it wrote, for the company line's notices after the commit. */
  notificationIds?: string[];
  /** The issues this one blocks, read in the write's own batch when it changed the status. */
  dependentIds?: string[];
}
