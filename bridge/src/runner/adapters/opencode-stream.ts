/**
 * Reads OpenCode's `run --format json` output: one JSON object a line, each with type, timestamp,
 * sessionID (the session, on every line) and a message part. Checked against opencode-ai 1.18.33's
 * real output: `step_start`, `text` (part.text, printed once the text is complete), `reasoning` (with
 * --thinking), `tool_use` (part.tool, part.callID, part.state with status completed|error, input,
 * output, error: printed once the tool has run, so call and result arrive together), `step_finish`
 * (part.reason "tool-calls" when the model goes on, else "stop", "length", …; part.tokens with input
 * (uncached), output, reasoning and cache.read/cache.write; part.cost in USD, from the model's prices
 * in OpenCode's models list: 0 for a model it has no prices for) and `error` (error.name,
 * error.data.message: the CLI then exits 1). There is no closing event: the run is over when the
 * process exits after a step finished.
 *
 * Cost: OpenCode's own, summed over the steps; when it says 0 (a model it has no prices for) or the
 * agent set adapterConfig.pricing, the tokens are priced with pricing.ts instead (never free by
 * accident).
 */
import { clip, type TranscriptEvent } from "../../protocol/transcript.ts";
import { jsonLinesParser } from "./cli-common.ts";
import { count, isObject, type Json, str } from "./json.ts";
import { type Meter, priced, type TokenCounts, usdToCents } from "./pricing.ts";
import type { StreamParser, StreamSummary } from "./types.ts";

interface Totals extends TokenCounts {
  costUsd: number;
}

/** A step's tokens the way pricing.ts counts them: input with cached included, reasoning as output. */
function stepTokens(part: Json): TokenCounts {
  const tokens = isObject(part.tokens) ? part.tokens : {};
  const cache = isObject(tokens.cache) ? tokens.cache : {};
  const cached = count(cache.read);
  return {
    input: count(tokens.input) + count(cache.write) + cached,
    cached,
    output: count(tokens.output) + count(tokens.reasoning),
  };
}

/** Usage and cost of the run so far: OpenCode's cost when it gave one, else the price table's. */
function usageOf(meter: Meter, totals: Totals): { usage: Record<string, unknown>; costCents: number } {
  if (meter.overridden || totals.costUsd <= 0) return priced(meter, totals);
  return {
    usage: {
      provider: meter.provider,
      model: meter.model,
      inputTokens: totals.input - totals.cached,
      cachedInputTokens: totals.cached,
      outputTokens: totals.output,
      costUsd: totals.costUsd,
      costSource: "opencode",
    },
    costCents: usdToCents(totals.costUsd),
  };
}

function toolEvents(part: Json): TranscriptEvent[] {
  const state = isObject(part.state) ? part.state : {};
  const id = clip(str(part.callID) ?? str(part.id) ?? "", 256);
  const isError = state.status === "error";
  const output = (isError ? str(state.error) : str(state.output)) ?? "";
  return [
    {
      type: "tool_call",
      id,
      name: clip(str(part.tool) ?? "", 256),
      input: clip(JSON.stringify(state.input ?? {})),
    },
    { type: "tool_result", toolCallId: id, isError, output: clip(output) },
  ];
}

const errorMessage = (error: unknown): string => {
  if (!isObject(error)) return "error";
  const data = isObject(error.data) ? error.data : {};
  return str(data.message) ?? str(error.name) ?? "error";
};

/**
 * `budgetCents`: the run's budget; a step after which the model goes on and the run's cost has reached
 * it marks the summary budgetExceeded, and the runner stops the process group.
 */
export function opencodeStreamParser(meter: Meter, budgetCents?: number): StreamParser {
  const summary: StreamSummary = { sawResult: false };
  const totals: Totals = { input: 0, cached: 0, output: 0, costUsd: 0 };
  let steps = 0;
  /** Parts already told: a part OpenCode updates after it was complete is printed again. */
  const told = new Set<string>();

  const init = (line: Json): TranscriptEvent[] => {
    const session = str(line.sessionID);
    if (!session || summary.sessionId) return [];
    summary.sessionId = session;
    return [{ type: "init", sessionId: clip(session, 256), model: meter.model }];
  };

  const stepFinished = (part: Json): TranscriptEvent[] => {
    summary.sawResult = true;
    steps += 1;
    const tokens = stepTokens(part);
    totals.input += tokens.input;
    totals.cached += tokens.cached;
    totals.output += tokens.output;
    totals.costUsd += typeof part.cost === "number" && part.cost > 0 ? part.cost : 0;
    const { usage, costCents } = usageOf(meter, totals);
    summary.usage = usage;
    summary.costCents = costCents;
    // The model goes on after its tool calls: only the step that ends the turn is the run's result.
    if (part.reason === "tool-calls") {
      if (budgetCents !== undefined && costCents >= budgetCents) summary.budgetExceeded = true;
      return [];
    }
    return [
      {
        type: "result",
        ok: true,
        text: null,
        costUsd: typeof usage.costUsd === "number" ? usage.costUsd : null,
        inputTokens: totals.input,
        outputTokens: totals.output,
        turns: steps,
      },
    ];
  };

  const parsed = (line: Json): TranscriptEvent[] => {
    const part = isObject(line.part) ? line.part : {};
    const events = init(line);
    const partId = str(part.id);
    if (partId && told.has(partId)) return events;
    if (partId) told.add(partId);
    if (line.type === "text") {
      const text = str(part.text) ?? "";
      if (text.trim()) events.push({ type: "assistant", text: clip(text) });
    } else if (line.type === "reasoning") {
      const text = str(part.text) ?? "";
      if (text.trim()) events.push({ type: "thinking", text: clip(text) });
    } else if (line.type === "tool_use") events.push(...toolEvents(part));
    else if (line.type === "step_finish") events.push(...stepFinished(part));
    else if (line.type === "error") {
      const message = errorMessage(line.error);
      summary.resultError = summary.resultError ? `${summary.resultError}; ${message}` : message;
      events.push({ type: "error", message: clip(message) });
    }
    return events;
  };

  return jsonLinesParser(summary, "OpenCode run --format json", parsed);
}
