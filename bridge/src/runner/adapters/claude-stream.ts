/**
 * Reads Claude Code's `--print --output-format stream-json --verbose` output: one JSON object a line,
 * `system/init` (session id, model), `assistant` and `user` messages (text, thinking, tool_use,
 * tool_result blocks) and a final `result` (is_error, errors, total_cost_usd, usage, num_turns).
 * Checked against @anthropic-ai/claude-code 2.1.331's real output.
 */
import { clip, type TranscriptEvent } from "../../protocol/transcript.ts";
import { jsonLinesParser } from "./cli-common.ts";
import type { StreamParser, StreamSummary } from "./types.ts";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const str = (value: unknown): string | null => (typeof value === "string" ? value : null);
const count = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0;

/** A tool result's content: a string, or text blocks. */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return JSON.stringify(content ?? "");
  return content
    .map((block) => (isObject(block) && typeof block.text === "string" ? block.text : JSON.stringify(block)))
    .join("\n");
}

function blockEvents(block: unknown): TranscriptEvent[] {
  if (!isObject(block)) return [];
  if (block.type === "text" && typeof block.text === "string")
    return block.text.trim() ? [{ type: "assistant", text: clip(block.text) }] : [];
  if (block.type === "thinking" && typeof block.thinking === "string")
    return [{ type: "thinking", text: clip(block.thinking) }];
  if (block.type === "tool_use")
    return [
      {
        type: "tool_call",
        id: clip(str(block.id) ?? "", 256),
        name: clip(str(block.name) ?? "", 256),
        input: clip(JSON.stringify(block.input ?? {})),
      },
    ];
  if (block.type === "tool_result")
    return [
      {
        type: "tool_result",
        toolCallId: clip(str(block.tool_use_id) ?? "", 256),
        isError: block.is_error === true,
        output: clip(resultText(block.content)),
      },
    ];
  return [];
}

const contentOf = (line: Json): unknown[] => {
  const message = line.message;
  return isObject(message) && Array.isArray(message.content) ? message.content : [];
};

/** Dollars to whole cents, rounded up: a budget never undercounts what the CLI says it spent. */
export const usdToCents = (usd: number): number => Math.ceil(Math.round(usd * 1e6) / 1e4);

export function claudeStreamParser(): StreamParser {
  const summary: StreamSummary = { sawResult: false };
  let model: string | null = null;

  const result = (line: Json): TranscriptEvent[] => {
    summary.sawResult = true;
    const usage = isObject(line.usage) ? line.usage : {};
    const costUsd = typeof line.total_cost_usd === "number" ? line.total_cost_usd : null;
    const models = isObject(line.modelUsage) ? Object.keys(line.modelUsage) : [];
    const inputTokens = count(usage.input_tokens) + count(usage.cache_creation_input_tokens);
    const outputTokens = count(usage.output_tokens);
    summary.usage = {
      provider: "anthropic",
      model: models[0] ?? model,
      inputTokens,
      cachedInputTokens: count(usage.cache_read_input_tokens),
      outputTokens,
      costUsd,
      turns: count(line.num_turns),
    };
    if (costUsd !== null) summary.costCents = usdToCents(costUsd);
    const errors = Array.isArray(line.errors) ? line.errors.filter((e) => typeof e === "string") : [];
    const ok = line.is_error !== true;
    if (!ok) summary.resultError = errors.join("; ") || str(line.result) || str(line.subtype) || "error";
    return [
      {
        type: "result",
        ok,
        text:
          str(line.result) === null
            ? ok
              ? null
              : clip(summary.resultError ?? "")
            : clip(String(line.result)),
        costUsd,
        inputTokens,
        outputTokens,
        turns: count(line.num_turns),
      },
    ];
  };

  const parsed = (line: Json): TranscriptEvent[] => {
    const sessionId = str(line.session_id);
    if (sessionId && line.type !== "result") summary.sessionId = sessionId;
    if (line.type === "system" && line.subtype === "init") {
      model = str(line.model);
      return [{ type: "init", sessionId: sessionId ? clip(sessionId, 256) : null, model }];
    }
    if (line.type === "assistant" || line.type === "user") return contentOf(line).flatMap(blockEvents);
    if (line.type === "result") {
      // A rejected --resume names the session it refused: that id is not one to keep.
      if (sessionId && line.is_error !== true) summary.sessionId = sessionId;
      return result(line);
    }
    return [];
  };

  return jsonLinesParser(summary, "Claude Code stream-json", parsed);
}
