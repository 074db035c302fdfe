/**
 * What the CLI adapters (claude, codex, gemini, opencode) share: the options every one takes, how
 * their adapterConfig is read, how their JSON-lines output is read, and how a run ended once the
 * CLI's own special cases (a rejected session, a refusal) are ruled out.
 */
import { z } from "zod";
import { clip, type TranscriptEvent } from "../../protocol/transcript.ts";
import { type Json, lastLine, typedLine } from "./json.ts";
import { PricesSchema } from "./pricing.ts";
import {
  AdapterConfigError,
  type LaunchContext,
  type ProcessEnd,
  type StreamParser,
  type StreamSummary,
  type Verdict,
} from "./types.ts";

/** Spread into each adapter's config schema. */
export const CLI_CONFIG_FIELDS = {
  command: z.string().min(1).optional(),
  model: z.string().min(1).max(200).optional(),
  pricing: PricesSchema.optional(),
  extraArgs: z.array(z.string()).default([]),
};

/** An environment variable's name, as `envKey` gives one. */
export const EnvName = z.string().regex(/^[A-Z_][A-Z0-9_]*$/);

/**
 * `adapterConfig.provider` of a CLI that speaks one vendor's API: an endpoint of one's own for it (a
 * gateway, a proxy, a compatible server) and the variable of the agent's env holding its key.
 */
export const providerEndpoint = (defaultKey: string) =>
  z.object({ baseUrl: z.string().url(), envKey: EnvName.default(defaultKey) });

/** The run's adapterConfig read with the adapter's schema, or every problem in one AdapterConfigError. */
export function parseAdapterConfig<Config>(
  schema: z.ZodType<Config>,
  adapterType: string,
  context: LaunchContext,
): Config {
  const parsed = schema.safeParse(context.run.adapterConfig ?? {});
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
  throw new AdapterConfigError(`${adapterType} adapterConfig: ${problems.join("; ")}`);
}

/**
 * A StreamParser over a CLI's JSON lines: each line with a string `type` goes to `parsed`; the first
 * other non-empty line is kept as `summary.garbage` and reported once as not `outputName`.
 */
export function jsonLinesParser(
  summary: StreamSummary,
  outputName: string,
  parsed: (line: Json) => TranscriptEvent[],
): StreamParser {
  return {
    line(text) {
      if (!text.trim()) return [];
      const value = typedLine(text);
      if (value) return parsed(value);
      if (summary.garbage !== undefined) return [];
      summary.garbage = clip(text.trim(), 200);
      return [{ type: "error", message: `not ${outputName} output: ${summary.garbage}` }];
    },
    summary: () => ({ ...summary }),
  };
}

/** yargs' complaint about a command line (Gemini CLI prints it above its usage). */
const ARGUMENT_COMPLAINT =
  /^(?:Unknown arguments?|Not enough non-option arguments|Invalid values?|Missing required arguments?):.*$/m;

/**
 * What a CLI that refused its command line said on stderr: yargs' complaint when it printed one, else,
 * when stderr holds the CLI's usage (`usage` finds it; OpenCode prints only that), that it did; else
 * undefined. A long usage would otherwise end the reason with its last option's help.
 */
export function argumentRefusal(stderrTail: string, usage: RegExp): string | undefined {
  const complaint = stderrTail.match(ARGUMENT_COMPLAINT)?.[0];
  if (complaint) return complaint.trim();
  if (usage.test(stderrTail))
    return "it printed its usage, refusing its arguments (an option in adapterConfig.extraArgs it does not take?)";
  return undefined;
}

export interface CliStream {
  /** The CLI's name in reasons ("claude"). */
  cli: string;
  /** Its output format, for a run that printed something else ("stream-json"). */
  format: string;
  /** The event that closes a run ("result"). */
  finalEvent: string;
}

/**
 * The verdict from the CLI's result event and exit: its reported error, success, a non-zero exit with
 * its last words (`said`, by default stderr's last line or the first unreadable output line), or a
 * stream that never finished.
 */
export function endVerdict(
  stream: CliStream,
  end: ProcessEnd,
  summary: StreamSummary,
  said: string | undefined = lastLine(end.stderrTail) || summary.garbage,
): Verdict {
  const { cli } = stream;
  if (summary.resultError) return { ok: false, reason: `${cli} reported an error: ${summary.resultError}` };
  if (summary.sawResult && end.exitCode === 0) return { ok: true };
  if (end.exitCode !== 0) {
    const how = end.exitCode === null ? "was killed by a signal" : `exited with code ${end.exitCode}`;
    return { ok: false, reason: `${cli} ${how}${said ? `: ${said}` : ""}` };
  }
  return {
    ok: false,
    reason: summary.garbage
      ? `${cli}'s output was not ${stream.format} (first unreadable line: ${summary.garbage})`
      : `${cli} ended without its ${stream.finalEvent} event`,
  };
}
