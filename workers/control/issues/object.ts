import type { Env } from "../../core/env";
import { namespaceOf } from "../../core/env";
import { announcementsLost, type LiveChange } from "../live";
import type { IssueLocation } from "./locator";
import type { IssueOperation, IssueOutcome } from "./operations";

/**
 * What the Worker asks of an issue's Durable Object (IssueDO implements it): every read-check-write
 * on the issue runs there, one at a time, and its detail is served from there. Its live feed (the
 * issue page's socket) is `fetch` with an upgrade (`watchRequest` in ../live).
 */
export interface IssueObject extends Rpc.DurableObjectBranded {
  apply(issueId: string, op: IssueOperation): Promise<IssueOutcome>;
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
 * The Durable Object of the issue with this id. Name it only with a server-side id, after the caller
 * was shown to see the issue; never with client input.
 */
export const issueObject = (env: Env, issueId: string): DurableObjectStub<IssueObject> =>
  namespaceOf<IssueObject>(env.ISSUE).getByName(issueId);

/**
 * Announces a change committed outside the issue's object, after its commit. A failure is logged,
 * never the writer's error: the change happened whether or not a page hears of it.
 */
export async function announceOnIssue(env: Env, change: LiveChange & { issueId: string }): Promise<void> {
  if (announcementsLost()) return;
  try {
    await issueObject(env, change.issueId).publish(change);
  } catch (error) {
    console.error(JSON.stringify({ level: "error", msg: "issue announcement failed", error: String(error) }));
  }
}
