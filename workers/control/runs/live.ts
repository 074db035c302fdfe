import type { Env } from "../../core/env";
import { type HeartbeatRunRow, heartbeatRuns } from "../../db/schema";
import { issueObject } from "../issues";

/** Which run an announcement is about: runs woken for no issue have no page to tell. */
export type AnnouncedRun = Pick<HeartbeatRunRow, "id" | "issueId" | "companyId" | "status">;

/** The columns an announcement names, for selects that find the run anyway. */
export const announcedColumns = {
  id: heartbeatRuns.id,
  issueId: heartbeatRuns.issueId,
  companyId: heartbeatRuns.companyId,
  status: heartbeatRuns.status,
};

/** Output a run writes within this long becomes one `run.log` event (pages re-read, not stream). */
export const LOG_ANNOUNCE_MS = 250;

/**
 * Tells the issue page a run of its issue started, ended or wrote output, after that was stored.
 * A failure is logged and swallowed: the run's own bookkeeping must not fail for a page.
 */
export async function announceRun(
  env: Env,
  run: AnnouncedRun,
  kind: "run.started" | "run.ended" | "run.log",
): Promise<void> {
  if (run.issueId === null) return;
  try {
    await issueObject(env, run.issueId).publish({
      kind,
      companyId: run.companyId,
      issueId: run.issueId,
      runId: run.id,
      status: run.status,
    });
  } catch (error) {
    console.error(JSON.stringify({ level: "error", msg: "run announcement failed", error: String(error) }));
  }
}

/**
 * Coalesces a run's output frames (an agent can print many per second) into at most one `run.log`
 * event per LOG_ANNOUNCE_MS, sent after the window, so the last frame is always announced.
 */
export class LogAnnouncer {
  readonly #pending = new Map<string, AnnouncedRun>();

  constructor(
    private readonly env: Env,
    private readonly keepAlive: (work: Promise<unknown>) => void,
  ) {}

  wrote(run: AnnouncedRun): void {
    if (run.issueId === null || this.#pending.has(run.id)) return;
    this.#pending.set(run.id, run);
    this.keepAlive(
      new Promise<void>((resolve) => setTimeout(resolve, LOG_ANNOUNCE_MS)).then(() => {
        this.#pending.delete(run.id);
        return announceRun(this.env, run, "run.log");
      }),
    );
  }
}
