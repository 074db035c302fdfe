import { DurableObject } from "cloudflare:workers";
import { applyIssueOperation } from "../workers/control/issue-ops";
import type { IssueOperation, IssueOutcome } from "../workers/control/issue-ops/types";
import { database } from "../workers/db/client";
import type { Env } from "../workers/env";

/**
 * One per control-plane issue, named by the issue id (after the caller's company was checked).
 * D1 has no interactive transactions, so every read-check-write on an issue (checkout, transition,
 * comment, document revision) runs here, strictly one after another, and commits with one batch.
 * The queue is explicit because each step awaits D1, and input gates do not hold across such awaits.
 */
export class IssueDO extends DurableObject<Env> {
  #tail: Promise<unknown> = Promise.resolve();

  apply(issueId: string, op: IssueOperation): Promise<IssueOutcome> {
    const run = this.#tail.then(() => applyIssueOperation(database(this.env.DB), issueId, op));
    this.#tail = run.catch(() => undefined);
    return run;
  }
}
