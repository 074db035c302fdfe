/**
 * Reads Claude Code's `--print --output-format stream-json --verbose` output: one JSON object a line,
 * `system/init` (session id, model), `assistant` and `user` messages (text, thinking, tool_use,
 * tool_result blocks) and a final `result` (is_error, errors, total_cost_usd, usage, modelUsage,
 * model_usage_since_last_result, num_turns). Checked against @anthropic-ai/claude-code 2.1.331's real
 * output.
 *
 * Cost: what Claude says the run's own calls cost (model_usage_since_last_result, not the session's
 * running total_cost_usd: see `charged`); when the agent set adapterConfig.pricing, the run's tokens
 * priced with those instead (cache writes at the input price), Claude's figure kept in the usage as
 * reportedCostUsd.
 */
import { clip, type TranscriptEvent } from "../../protocol/transcript.ts";
import { jsonLinesParser } from "./cli-common.ts";
import { count, isObject, type Json, str } from "./json.ts";
import { type Meter, NO_TOKENS, priced, type TokenCounts, usdToCents } from "./pricing.ts";
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

/** Tokens as pricing.ts counts them: input with cache writes and cache reads included; cached: the reads. */
const tokenCounts = (
  input: number,
  cacheWrites: number,
  cacheReads: number,
  output: number,
): TokenCounts => ({
  input: input + cacheWrites + cacheReads,
  cached: cacheReads,
  output,
});

/** The result's `usage` (the main loop's calls of this process, snake_case). */
function mainLoopTokens(line: Json): TokenCounts {
  const usage = isObject(line.usage) ? line.usage : {};
  return tokenCounts(
    count(usage.input_tokens),
    count(usage.cache_creation_input_tokens),
    count(usage.cache_read_input_tokens),
    count(usage.output_tokens),
  );
}

interface OwnFigures {
  tokens: TokenCounts;
  costUsd: number;
  model: string | undefined;
}

/**
 * `model_usage_since_last_result`: per model, what this process counted since its previous result
 * (since it started, for its first): in a --print run, the run's own calls, subagents included, also
 * when it resumed a session. Undefined when the CLI did not set it (older versions, error results
 * numbered by hand).
 */
function sinceLastResult(line: Json): OwnFigures | undefined {
  const perModel = line.model_usage_since_last_result;
  if (!isObject(perModel)) return undefined;
  const own: OwnFigures = { tokens: { ...NO_TOKENS }, costUsd: 0, model: Object.keys(perModel)[0] };
  for (const entry of Object.values(perModel)) {
    if (!isObject(entry)) continue;
    const tokens = tokenCounts(
      count(entry.inputTokens),
      count(entry.cacheCreationInputTokens),
      count(entry.cacheReadInputTokens),
      count(entry.outputTokens),
    );
    own.tokens = {
      input: own.tokens.input + tokens.input,
      cached: own.tokens.cached + tokens.cached,
      output: own.tokens.output + tokens.output,
    };
    own.costUsd += typeof entry.costUSD === "number" && entry.costUSD > 0 ? entry.costUSD : 0;
  }
  return own;
}

interface Charge {
  tokens: TokenCounts;
  usage: Record<string, unknown>;
  costUsd: number | null;
  costCents?: number;
}

/**
 * The run's own usage and cost. `total_cost_usd` and `modelUsage` are the SESSION's running totals:
 * a resumed session goes on from the total its transcript saved (Claude Code 2.1.331's own schema
 * says so, and a resumed run printed 0.33, 0.66, 0.99 for three equal runs), so they are never the
 * run's figure after a resume. `model_usage_since_last_result` is: its costUSD summed is what the run
 * cost. Without it, a fresh run's total is its own; a resumed run's main-loop tokens are priced with
 * the table (`meter`) rather than charged the session again. The agent's own prices
 * (meter.overridden) price the run's tokens instead of Claude's figure, which is kept as
 * reportedCostUsd.
 */
function charged(line: Json, model: string | null, meter: Meter, resumed: boolean): Charge {
  const total = typeof line.total_cost_usd === "number" ? line.total_cost_usd : null;
  const own = sinceLastResult(line);
  const named =
    own?.model ?? (isObject(line.modelUsage) ? Object.keys(line.modelUsage)[0] : undefined) ?? model;
  const tokens = own?.tokens ?? mainLoopTokens(line);
  const reported = own ? own.costUsd : resumed ? null : total;
  const turns = count(line.num_turns);
  if (meter.overridden || reported === null) {
    const bill = priced({ ...meter, model: named ?? meter.model, before: NO_TOKENS }, tokens);
    return { tokens, ...bill, usage: { ...bill.usage, reportedCostUsd: reported, turns } };
  }
  const usage = {
    provider: "anthropic",
    model: named,
    inputTokens: tokens.input - tokens.cached,
    cachedInputTokens: tokens.cached,
    outputTokens: tokens.output,
    costUsd: reported,
    turns,
  };
  return { tokens, usage, costUsd: reported, costCents: usdToCents(reported) };
}

/**
 * `meter`: the table's prices for the model, or the agent's own (adapterConfig.pricing, overridden),
 * which win over Claude's reported cost. `resumed`: the launch resumes a session.
 */
export function claudeStreamParser(meter: Meter, resumed: boolean): StreamParser {
  const summary: StreamSummary = { sawResult: false };
  let model: string | null = null;

  const result = (line: Json): TranscriptEvent[] => {
    summary.sawResult = true;
    const { tokens, usage, costUsd, costCents } = charged(line, model, meter, resumed);
    summary.usage = usage;
    if (costCents !== undefined) summary.costCents = costCents;
    const errors = Array.isArray(line.errors) ? line.errors.filter((e) => typeof e === "string") : [];
    const ok = line.is_error !== true;
    if (!ok) summary.resultError = errors.join("; ") || str(line.result) || str(line.subtype) || "error";
    if (line.subtype === "error_max_budget_usd") summary.budgetExceeded = true;
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
