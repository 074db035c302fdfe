/**
 * Reads Codex's `exec --json` output: one JSON object a line. Checked against @openai/codex 0.169.0's
 * real output: `thread.started` (thread_id: the session), `turn.started`, `item.started` /
 * `item.updated` / `item.completed` with an item (`agent_message`, `reasoning`, `command_execution`
 * with command, aggregated_output and exit_code, `file_change`, `mcp_tool_call`, `web_search`,
 * `todo_list`, `error`), `turn.completed` with usage (input_tokens, cached_input_tokens,
 * output_tokens: the thread's running total, not the turn's), `turn.failed` with error.message, and
 * top-level `error` lines (also for retries it recovers from, so they alone do not fail a run).
 */
import { clip, type TranscriptEvent } from "../../protocol/transcript.ts";
import { jsonLinesParser } from "./cli-common.ts";
import { count, isObject, type Json, str } from "./json.ts";
import { type Meter, priced } from "./pricing.ts";
import type { StreamParser, StreamSummary } from "./types.ts";

const id = (item: Json): string => clip(str(item.id) ?? "", 256);

/** A tool-like item as a call: its name and what it was asked to do. */
function callOf(item: Json): { name: string; input: unknown } | null {
  if (item.type === "command_execution")
    return { name: "command_execution", input: { command: item.command } };
  if (item.type === "file_change") return { name: "file_change", input: { changes: item.changes } };
  if (item.type === "mcp_tool_call")
    return { name: `mcp:${str(item.server) ?? ""}/${str(item.tool) ?? ""}`, input: item.arguments ?? {} };
  if (item.type === "web_search") return { name: "web_search", input: { query: item.query } };
  return null;
}

function resultOf(item: Json): { isError: boolean; output: string } {
  if (item.type === "command_execution")
    return {
      isError: item.status === "failed" || (typeof item.exit_code === "number" && item.exit_code !== 0),
      output: str(item.aggregated_output) ?? "",
    };
  if (item.type === "mcp_tool_call")
    return { isError: item.error != null, output: JSON.stringify(item.error ?? item.result ?? null) };
  return { isError: item.status === "failed", output: str(item.status) ?? "" };
}

const callEvent = (item: Json, call: { name: string; input: unknown }): TranscriptEvent => ({
  type: "tool_call",
  id: id(item),
  name: clip(call.name, 256),
  input: clip(JSON.stringify(call.input)),
});

export function codexStreamParser(meter: Meter): StreamParser {
  const summary: StreamSummary = { sawResult: false };
  const started = new Set<string>();
  let lastError: string | null = null;

  const itemEvents = (phase: string, item: Json): TranscriptEvent[] => {
    const call = callOf(item);
    if (call && phase === "item.started") {
      started.add(id(item));
      return [callEvent(item, call)];
    }
    if (phase !== "item.completed") return [];
    if (call) {
      const before = started.has(id(item)) ? [] : [callEvent(item, call)];
      const { isError, output } = resultOf(item);
      return [...before, { type: "tool_result", toolCallId: id(item), isError, output: clip(output) }];
    }
    const text = str(item.text) ?? str(item.message) ?? "";
    if (item.type === "agent_message") return text.trim() ? [{ type: "assistant", text: clip(text) }] : [];
    if (item.type === "reasoning") return text.trim() ? [{ type: "thinking", text: clip(text) }] : [];
    if (item.type === "error") return [{ type: "error", message: clip(text) }];
    return [];
  };

  const completed = (line: Json): TranscriptEvent[] => {
    summary.sawResult = true;
    const usage = isObject(line.usage) ? line.usage : {};
    const total = {
      input: count(usage.input_tokens),
      cached: count(usage.cached_input_tokens),
      output: count(usage.output_tokens),
    };
    const { usage: recorded, costCents } = priced(meter, total);
    summary.usage = recorded;
    summary.costCents = costCents;
    const tokens = (key: string): number => count(recorded[key]);
    return [
      {
        type: "result",
        ok: true,
        text: null,
        costUsd: typeof recorded.costUsd === "number" ? recorded.costUsd : null,
        inputTokens: tokens("inputTokens") + tokens("cachedInputTokens"),
        outputTokens: tokens("outputTokens"),
        turns: 1,
      },
    ];
  };

  const parsed = (line: Json): TranscriptEvent[] => {
    if (line.type === "thread.started") {
      const session = str(line.thread_id);
      if (session) summary.sessionId = session;
      return [{ type: "init", sessionId: session ? clip(session, 256) : null, model: meter.model }];
    }
    const type = String(line.type);
    if (type.startsWith("item.") && isObject(line.item)) return itemEvents(type, line.item);
    if (line.type === "turn.completed") return completed(line);
    if (line.type === "turn.failed") {
      summary.sawResult = true;
      const error = isObject(line.error) ? str(line.error.message) : null;
      summary.resultError = error ?? lastError ?? "turn failed";
      return [
        {
          type: "result",
          ok: false,
          text: clip(summary.resultError),
          costUsd: null,
          inputTokens: null,
          outputTokens: null,
          turns: 1,
        },
      ];
    }
    if (line.type === "error") {
      lastError = str(line.message) ?? "error";
      return [{ type: "error", message: clip(lastError) }];
    }
    return [];
  };

  return jsonLinesParser(summary, "Codex exec --json", parsed);
}
