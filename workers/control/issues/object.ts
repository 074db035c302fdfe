import type { Env } from "../../core/env";
import { namespaceOf } from "../../core/env";
import { announcementsLost, type LiveChange } from "../live";
import type { IssueLocation } from "./locator";
import type { IssueOperation, IssueOutcome } from "./operations";

/**
 * What the Worker asks of an issue's Durable Object (IssueDO implements it): every read-check-write
 * on the issue runs there, one at a time per issue, and its detail is served from there. Its live
 * feed (the issue page's socket) is `fetch` with an upgrade (`watchRequest` in ../live, naming the
 * issue as its feed).
 */
export interface IssueObject extends Rpc.DurableObjectBranded {
  /** Runs the operation on the issue at `location` (which the Worker resolved and checked). */
  apply(location: IssueLocation, op: IssueOperation): Promise<IssueOutcome>;
  /** The issue's detail as JSON text, or null when the issue no longer exists. */
  detail(location: IssueLocation): Promise<string | null>;
  /**
   * Announces a change committed outside the object (a run of this issue started, ended or wrote
   * output, a file attached, a blocker's status) on the issue's live feed. Changes made by `apply` are
   * announced by the object itself.
   */
  publish(change: LiveChange): Promise<void>;
}

/**
 * A company's issues are spread over this many IssueDOs, by a hash of the issue's id. One object per
 * issue made every first touch of an issue (its first read, its first checkout) start a new object
 * and create its storage, the largest cost of that request (docs/decisions.md, "Issue objects are
 * shards of a company"); one object per company would put all of a busy company's reads and writes
 * through one object.
 */
export const ISSUE_SHARDS_PER_COMPANY = 16;

/** FNV-1a of the id, to a shard: stable across isolates and deploys, whatever the id's format. */
export function issueShardOf(issueId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < issueId.length; i++) hash = Math.imul(hash ^ issueId.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % ISSUE_SHARDS_PER_COMPANY;
}

/** The name of the IssueDO that holds this issue: its company's, so no object serves two companies. */
export const issueObjectName = (location: IssueLocation): string =>
  `${location.companyId}/issues-${issueShardOf(location.id)}`;

/**
 * The Durable Object that holds this issue. Name it only with server-side ids, after the caller was
 * shown to see the issue; never with client input.
 */
export const issueObject = (env: Env, location: IssueLocation): DurableObjectStub<IssueObject> =>
  namespaceOf<IssueObject>(env.ISSUE).getByName(issueObjectName(location));

/**
 * Announces a change committed outside the issue's object, after its commit. A failure is logged,
 * never the writer's error: the change happened whether or not a page hears of it.
 */
export async function announceOnIssue(env: Env, change: LiveChange & { issueId: string }): Promise<void> {
  if (announcementsLost()) return;
  try {
    await issueObject(env, { id: change.issueId, companyId: change.companyId }).publish(change);
  } catch (error) {
    console.error(JSON.stringify({ level: "error", msg: "issue announcement failed", error: String(error) }));
  }
}
