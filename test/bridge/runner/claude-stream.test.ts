// Claude Code's result line without model_usage_since_last_result (CLIs before it, error results the
// CLI numbers by hand): a fresh run's total_cost_usd is its own, but a resumed run's is the session's
// running total, so its main-loop tokens are priced with the table instead. (The field itself is
// covered with the real CLI in claude-local.test.ts.)
import { describe, expect, it } from "vitest";
import { claudeStreamParser } from "../../../bridge/src/runner/adapters/claude-stream.ts";
import { meterFor } from "../../../bridge/src/runner/adapters/pricing.ts";

/** A result line as an older CLI printed it after a resumed session's third equal run. */
const olderResult = JSON.stringify({
  type: "result",
  subtype: "success",
  is_error: false,
  num_turns: 1,
  result: "ok",
  session_id: "s-1",
  total_cost_usd: 0.99,
  usage: {
    input_tokens: 100_000,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: 2_000,
  },
  modelUsage: { "claude-sonnet-4-5": { inputTokens: 300_000, outputTokens: 6_000, costUSD: 0.99 } },
});

const summaryOf = (resumed: boolean) => {
  const parser = claudeStreamParser(meterFor("anthropic", "claude-sonnet-4-5"), resumed);
  parser.line(olderResult);
  return parser.summary();
};

describe("claude stream cost without model_usage_since_last_result", () => {
  it("a resumed run is charged its own main-loop tokens at the table's prices, not the session total", () => {
    const summary = summaryOf(true);
    // 100k in at $3, 2k out at $15 per million: $0.33, not the $0.99 the session has cost so far.
    expect(summary.costCents).toBe(33);
    expect(summary.usage).toMatchObject({
      inputTokens: 100_000,
      outputTokens: 2_000,
      costUsd: 0.33,
      reportedCostUsd: null,
    });
  });

  it("a fresh run's total_cost_usd is its own", () => {
    expect(summaryOf(false)).toMatchObject({ costCents: 99, usage: { costUsd: 0.99 } });
  });
});
