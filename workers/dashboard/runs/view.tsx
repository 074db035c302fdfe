import type { Context } from "hono";
import type { z } from "zod";
import type { RunSchema } from "../../control/agents";
import { apiCompanyPath } from "../ui/board-shared";
import { StatusBadge, Time } from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { Transcript, transcriptOf } from "./transcript";

/** A heartbeat run on a page: how it was woken, when, how it ended, why it waits, and its output. */

type Run = z.infer<typeof RunSchema>;
type PageContext = Context<DashboardEnv>;

/** GET /heartbeat-runs/{runId}/log (../control/runs/routes.ts RunLogSchema), the part shown here. */
interface RunLog {
  chunks: Array<{ seq: number; stream: string; text: string }>;
}

/** The newest runs woken for this issue; older ones are in the API. */
const RUNS_SHOWN = 5;
/** The tail of a log worth showing inline; the API has the whole output. */
const LOG_TAIL_CHARS = 16_384;

export async function logOf(c: PageContext, run: Run): Promise<string> {
  const log = await c.var.api.read<RunLog>(`/api/heartbeat-runs/${run.id}/log`);
  const text = log.ok ? log.data.chunks.map((chunk) => chunk.text).join("") : "";
  if (text !== "") return text.slice(-LOG_TAIL_CHARS);
  // The full log may be gone while the run keeps the tail of its output.
  const detail = await c.var.api.read<{ logExcerpt: string | null }>(`/api/heartbeat-runs/${run.id}`);
  return detail.ok ? (detail.data.logExcerpt ?? "") : "";
}

/** The newest runs woken for an issue, each with its conversation and the tail of its output. */
export async function runsOf(c: PageContext, issue: { id: string; companyId: string }) {
  const runs = await c.var.api.get<Run[]>(
    `${apiCompanyPath(issue.companyId)}/heartbeat-runs?issueId=${issue.id}&limit=${RUNS_SHOWN}`,
  );
  return Promise.all(
    runs.map(async (run) => ({ run, log: await logOf(c, run), events: await transcriptOf(c, run.id) })),
  );
}

type RunEntryProps = {
  run: Run;
  log: string;
  events: Awaited<ReturnType<typeof transcriptOf>>;
  names: ReadonlyMap<string, string>;
};

/** Who woke the run, by name: the person or agent behind it (none for a schedule or the system). */
function invokerOf(run: Run, names: ReadonlyMap<string, string>): string | null {
  if (run.requestedByAgentId) return names.get(run.requestedByAgentId) ?? run.requestedByName ?? "an agent";
  if (run.requestedByUserId) return run.requestedByName ?? "a former member";
  return null;
}

export function RunEntry({ run, log, events, names }: RunEntryProps) {
  return (
    <article class="card">
      <h3>
        {names.get(run.agentId) ?? "An agent"}: <StatusBadge status={run.status} />
      </h3>
      <dl class="facts">
        <dt>Woken by</dt>
        <dd>
          {run.wakeReason.replace(/_/g, " ")} ({run.invocationSource.replace(/_/g, " ")})
          {invokerOf(run, names) && <> — {invokerOf(run, names)}</>}
        </dd>
        <dt>Queued</dt>
        <dd>
          <Time value={run.createdAt} />
        </dd>
        <dt>Started</dt>
        <dd>
          <Time value={run.startedAt} />
        </dd>
        <dt>Finished</dt>
        <dd>
          <Time value={run.finishedAt} />
        </dd>
        <dt>Exit code</dt>
        <dd>{run.exitCode ?? "—"}</dd>
        {run.sessionId && (
          <>
            <dt>CLI session</dt>
            <dd>
              {run.sessionId} ({run.resumed ? "resumed" : "new"})
            </dd>
          </>
        )}
        {run.errorReason && (
          <>
            <dt>Reason</dt>
            <dd>{run.errorReason}</dd>
          </>
        )}
      </dl>
      {run.queuePosition !== null && !run.waitingForRunner && (
        <p class="muted" role="status">
          Queued: number {run.queuePosition} in the company's queue. It starts when the company's cap on runs
          at once, its agent and a runner have room.
        </p>
      )}
      {run.waitingForRunner && (
        <p class="muted" role="status">
          Waiting for a runner: no runner that serves this company is connected. An owner of the company
          registers one (POST /api/companies/{run.companyId}/runners) and starts it with its token (npm run
          runner); see docs/security.md.
        </p>
      )}
      <Transcript events={events} />
      <RunOutput log={log} folded={events.length > 0} />
    </article>
  );
}

/**
 * The run's captured stdout/stderr. Once the conversation above tells the story, the CLI's raw stream
 * (pages of JSON for Claude Code) is folded away: still one click from anyone debugging an adapter.
 */
function RunOutput({ log, folded }: { log: string; folded: boolean }) {
  if (log === "") return <p class="muted">No output yet.</p>;
  if (!folded)
    return (
      <>
        <h4>Output</h4>
        <pre>{log}</pre>
      </>
    );
  return (
    <details class="raw-output">
      <summary>Raw output ({lines(log)})</summary>
      <pre>{log}</pre>
    </details>
  );
}

function lines(log: string): string {
  const count = log.split("\n").filter((line) => line !== "").length;
  return count === 1 ? "1 line" : `${count} lines`;
}
