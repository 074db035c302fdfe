/**
 * Reads Gemini CLI's `--output-format stream-json` output: one JSON object a line. Checked against
 * @google/gemini-cli 0.61.0's real output: `init` (session_id: the session, model), `message` (role
 * user: the prompt; role assistant with delta: a piece of the answer), `tool_use` (tool_name,
 * tool_id, parameters), `tool_result` (tool_id, status success|error, output, error.message), `error`
 * (severity warning|error, message: the CLI goes on), and the final `result` (status success|error,
 * error.message, stats with input_tokens (cached ones included), cached and output_tokens: this
 * run's, not the session's running total).
 */
import { clip, type TranscriptEvent } from "../../protocol/transcript.ts";
import { jsonLinesParser } from "./cli-common.ts";
import { count, isObject, type Json, str } from "./json.ts";
import { type Meter, priced } from "./pricing.ts";
import type { StreamParser, StreamSummary } from "./types.ts";

export function geminiStreamParser(meter: Meter): StreamParser {
  const summary: StreamSummary = { sawResult: false };
  let model = meter.model;
  /** Assistant text arrives in pieces: one transcript event for each stretch of them. */
  let pending = "";

  const flush = (): TranscriptEvent[] => {
    const text = pending;
    pending = "";
    return text.trim() ? [{ type: "assistant", text: clip(text) }] : [];
  };

  const result = (line: Json): TranscriptEvent[] => {
    summary.sawResult = true;
    const stats = isObject(line.stats) ? line.stats : {};
    const total = {
      input: count(stats.input_tokens),
      cached: count(stats.cached),
      output: count(stats.output_tokens),
    };
    const { usage, costCents } = priced({ ...meter, model }, total);
    summary.usage = usage;
    summary.costCents = costCents;
    const ok = line.status === "success";
    if (!ok) summary.resultError = (isObject(line.error) ? str(line.error.message) : null) ?? "run failed";
    return [
      {
        type: "result",
        ok,
        text: ok ? null : clip(summary.resultError ?? ""),
        costUsd: typeof usage.costUsd === "number" ? usage.costUsd : null,
        inputTokens: total.input,
        outputTokens: total.output,
        turns: null,
      },
    ];
  };

  const parsed = (line: Json): TranscriptEvent[] => {
    if (line.type === "message") {
      if (line.role === "assistant") pending += str(line.content) ?? "";
      return [];
    }
    const before = flush();
    if (line.type === "init") {
      const session = str(line.session_id);
      if (session) summary.sessionId = session;
      model = str(line.model) ?? model;
      return [{ type: "init", sessionId: session ? clip(session, 256) : null, model }];
    }
    if (line.type === "tool_use")
      return [
        ...before,
        {
          type: "tool_call",
          id: clip(str(line.tool_id) ?? "", 256),
          name: clip(str(line.tool_name) ?? "", 256),
          input: clip(JSON.stringify(line.parameters ?? {})),
        },
      ];
    if (line.type === "tool_result") {
      const isError = line.status !== "success";
      const error = isObject(line.error) ? str(line.error.message) : null;
      const output = str(line.output) ?? (isError ? error : null) ?? "";
      return [
        ...before,
        {
          type: "tool_result",
          toolCallId: clip(str(line.tool_id) ?? "", 256),
          isError,
          output: clip(output),
        },
      ];
    }
    if (line.type === "error") {
      const severity = str(line.severity) ?? "error";
      return [...before, { type: "error", message: clip(`${severity}: ${str(line.message) ?? ""}`) }];
    }
    if (line.type === "result") return [...before, ...result(line)];
    return before;
  };

  return jsonLinesParser(summary, "Gemini CLI stream-json", parsed);
}
