import type { Env } from "../../core/env";

/**
 * Tells connected runners that runs may be waiting, so they claim at once instead of at their next
 * poll. Call it (or pass it to waitUntil) after committing anything that queued a heartbeat run.
 * Never throws: runners also poll, so a lost nudge only delays a run.
 */
export async function runsQueued(env: Env): Promise<void> {
  try {
    await env.RUNS.getByName("runs").nudge();
  } catch {
    // best effort; see above
  }
}
