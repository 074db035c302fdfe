/**
 * Reads Claude Code's `--print --output-format stream-json --verbose` output: one JSON object a line,
 * `system/init` (session id, model), `assistant` and `user` messages (text, thinking, tool_use,
 * tool_result blocks) and a final `result` (is_error, errors, total_cost_usd, usage, num_turns).
 * Checked against @anthropic-ai/claude-code 2.1.331's real output.
 *
 * Cost: Claude's own total_cost_usd; when the agent set adapterConfig.pricing (the launch's meter),
 * the run's tokens priced with those instead (cache writes at the input price), Claude's figure kept
 * in the usage as reportedCostUsd.
 */
import { clip, type TranscriptEvent } from "../../protocol/transcript.ts";
import { jsonLinesParser } from "./cli-common.ts";
import { count, isObject, type Json, str } from "./json.ts";
import { type Meter, priced, usdToCents } from "./pricing.ts";
import type { StreamParser, StreamSummary } from "./types.ts";

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

/** The result's tokens: input is the uncached part, cache writes included; cached is cache reads. */
function tokensOf(line: Json): { input: number; cached: number; output: number } {
  const usage = isObject(line.usage) ? line.usage : {};
  return {
    input: count(usage.input_tokens) + count(usage.cache_creation_input_tokens),
    cached: count(usage.cache_read_input_tokens),
    output: count(usage.output_tokens),
  };
}

interface Charge {
  usage: Record<string, unknown>;
  costUsd: number | null;
  costCents?: number;
}

/** The run's usage and cost: Claude's own, or its tokens at the agent's prices (`meter`). */
function charged(
  line: Json,
  tokens: ReturnType<typeof tokensOf>,
  model: string | null,
  meter?: Meter,
): Charge {
  const reported = typeof line.total_cost_usd === "number" ? line.total_cost_usd : null;
  const named = (isObject(line.modelUsage) ? Object.keys(line.modelUsage)[0] : undefined) ?? model;
  const turns = count(line.num_turns);
  if (meter) {
    const own = priced(
      { ...meter, model: named ?? meter.model },
      { input: tokens.input + tokens.cached, cached: tokens.cached, output: tokens.output },
    );
    return { ...own, usage: { ...own.usage, reportedCostUsd: reported, turns } };
  }
  const usage = {
    provider: "anthropic",
    model: named,
    inputTokens: tokens.input,
    cachedInputTokens: tokens.cached,
    outputTokens: tokens.output,
    costUsd: reported,
    turns,
  };
  return reported === null
    ? { usage, costUsd: null }
    : { usage, costUsd: reported, costCents: usdToCents(reported) };
}

/** `meter`: the agent's own prices (adapterConfig.pricing), which win over Claude's reported cost. */
export function claudeStreamParser(meter?: Meter): StreamParser {
  const summary: StreamSummary = { sawResult: false };
  let model: string | null = null;

  const result = (line: Json): TranscriptEvent[] => {
    summary.sawResult = true;
    const tokens = tokensOf(line);
    const { usage, costUsd, costCents } = charged(line, tokens, model, meter);
    summary.usage = usage;
    if (costCents !== undefined) summary.costCents = costCents;
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
        inputTokens: tokens.input,
        outputTokens: tokens.output,
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
