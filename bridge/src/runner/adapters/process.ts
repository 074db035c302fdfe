/**
 * `process`: the escape hatch. Starts adapterConfig.command with adapterConfig.args, the rendered
 * prompt on standard input, and reads nothing of its output but a `PLATFORM_USAGE {json}` line (the
 * last one counts) for usage and cost. Any program can be an agent this way; a real CLI is better
 * served by its own adapter, which reads its cost, session and transcript. The legacy types
 * coder_local and assistant_local run as this adapter.
 */
import type { Adapter, Launch, LaunchContext, StreamParser, StreamSummary, Verdict } from "./types.ts";

const USAGE_LINE = /^PLATFORM_USAGE\s+(\{.*\})\s*$/;

function usageOf(line: string): Pick<StreamSummary, "usage" | "costCents"> | null {
  const json = line.match(USAGE_LINE)?.[1];
  if (!json) return null;
  try {
    const usage = JSON.parse(json) as unknown;
    if (typeof usage !== "object" || usage === null || Array.isArray(usage)) return null;
    const cost = (usage as Record<string, unknown>).costCents;
    return {
      usage: usage as Record<string, unknown>,
      ...(typeof cost === "number" && Number.isInteger(cost) && cost >= 0 ? { costCents: cost } : {}),
    };
  } catch {
    return null;
  }
}

function usageParser(): StreamParser {
  let last: Pick<StreamSummary, "usage" | "costCents"> = {};
  return {
    line(text) {
      last = usageOf(text) ?? last;
      return [];
    },
    summary: () => ({ ...last, sawResult: true }),
  };
}

export const processAdapter: Adapter = {
  type: "process",
  program: null,
  resumes: false,
  async launch({ run }: LaunchContext): Promise<Launch> {
    return { command: run.command, args: run.args, env: {}, stdin: run.prompt, files: [] };
  },
  parser: usageParser,
  verdict: ({ exitCode }): Verdict => (exitCode === 0 ? { ok: true } : { ok: false }),
};
