import type { Env } from "../../core/env";
import { namespaceOf } from "../../core/env";

/** What the Worker asks of the RunDispatcher (it implements this); runners dial its `fetch`. */
export interface RunDispatcherObject extends Rpc.DurableObjectBranded {
  /** Runs may be waiting: every connected runner is told to claim. */
  nudge(): Promise<void>;
}

/** The one RunDispatcher of the deployment. */
export const runDispatcher = (env: Env): DurableObjectStub<RunDispatcherObject> =>
  namespaceOf<RunDispatcherObject>(env.RUNS).getByName("runs");

/**
 * Tells connected runners that runs may be waiting, so they claim at once instead of at their next
 * poll. Call it (or pass it to waitUntil) after committing anything that queued a heartbeat run.
 * Never throws: runners also poll, so a lost nudge only delays a run.
 */
export async function runsQueued(env: Env): Promise<void> {
  try {
    await runDispatcher(env).nudge();
  } catch {
    // best effort; see above
  }
}
