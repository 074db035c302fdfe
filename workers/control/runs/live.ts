import type { Env } from "../../core/env";
import { type HeartbeatRunRow, heartbeatRuns } from "../../db/schema";
import { issueObject } from "../issues";
import { companyFeed, type LiveChange } from "../live";

/** Which run an announcement is about. */
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
 * Tells the pages showing a run that it started, ended or wrote output, after that was stored: on its
 * issue's feed (the issue page and the run's page), or on its company's for a run woken for no issue
 * (only the run's page listens for it there). A failure is logged and swallowed: the run's own
 * bookkeeping must not fail for a page.
 */
export async function announceRun(
  env: Env,
  run: AnnouncedRun,
  kind: "run.started" | "run.ended" | "run.log",
): Promise<void> {
  const change: LiveChange = {
    kind,
    companyId: run.companyId,
    issueId: run.issueId,
    runId: run.id,
    status: run.status,
  };
  try {
    await (run.issueId === null
      ? companyFeed(env, run.companyId).publish(change)
      : issueObject(env, { id: run.issueId, companyId: run.companyId }).publish(change));
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
    if (this.#pending.has(run.id)) return;
    this.#pending.set(run.id, run);
    this.keepAlive(
      new Promise<void>((resolve) => setTimeout(resolve, LOG_ANNOUNCE_MS)).then(() => {
        this.#pending.delete(run.id);
        return announceRun(this.env, run, "run.log");
      }),
    );
  }
}
