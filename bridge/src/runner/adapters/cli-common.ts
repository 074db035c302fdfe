/**
 * What the CLI adapters (claude, codex, gemini) share: the options every one takes, and how a run
 * ended once the CLI's own special cases (a rejected session, a refusal) are ruled out.
 */
import { z } from "zod";
import { lastLine } from "./json.ts";
import { PricesSchema } from "./pricing.ts";
import type { ProcessEnd, StreamSummary, Verdict } from "./types.ts";

/** Spread into each adapter's config schema. */
export const CLI_CONFIG_FIELDS = {
  command: z.string().min(1).optional(),
  model: z.string().min(1).max(200).optional(),
  pricing: PricesSchema.optional(),
  extraArgs: z.array(z.string()).default([]),
};

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
