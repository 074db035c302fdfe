import type { Env } from "../../core/env";
import { namespaceOf } from "../../core/env";

/** What the Worker asks of the RunDispatcher (it implements this); runners dial its `fetch`. */
export interface RunDispatcherObject extends Rpc.DurableObjectBranded {
  /**
   * Runs may be waiting: every connected runner is told to claim, and queued http runs are sent.
   * `apiUrl`: the origin the caller was reached at (the API base URL is origin + `/api`), remembered for the http runs' wakes.
   */
  nudge(apiUrl?: string): Promise<void>;
  /** An issue was closed: runners holding worktrees ask which of theirs may go. */
  issuesClosed(): Promise<void>;
  /** Tells the link holding a running run to stop it; false when that link is gone. */
  cancelRun(runId: string, linkId: string): Promise<boolean>;
  /** A revoked runner: its links close now and the runs they held fail as runner_revoked. */
  disconnectRunner(runnerId: string): Promise<void>;
}

/** The one RunDispatcher of the deployment. */
export const runDispatcher = (env: Env): DurableObjectStub<RunDispatcherObject> =>
  namespaceOf<RunDispatcherObject>(env.RUNS).getByName("runs");

/**
 * Tells connected runners that runs may be waiting, so they claim at once instead of at their next
 * poll. Call it (or pass it to waitUntil) after committing anything that queued a heartbeat run.
 * Never throws: runners also poll, so a lost nudge only delays a run. `apiUrl` (the request's origin)
 * gives the base URL http agents are told to call back on; paths without a request (cron) leave it out.
 */
export async function runsQueued(env: Env, apiUrl?: string): Promise<void> {
  try {
    await runDispatcher(env).nudge(apiUrl);
  } catch {
    // best effort; see above
  }
}

/**
 * Tells connected runners an issue was closed, so they remove its worktree now rather than at their
 * next check (every minute). Never throws, for the same reason as runsQueued.
 */
export async function issuesClosed(env: Env): Promise<void> {
  try {
    await runDispatcher(env).issuesClosed();
  } catch {
    // best effort: runners check every minute anyway
  }
}
