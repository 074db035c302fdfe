// The runner's price table (bridge/src/runner/adapters/pricing.ts): a model is priced by the longest
// name prefix the table has (gpt-5.5 is not gpt-5), an unknown model by its provider's dearest model
// (never free), and an agent's own prices win.
import { describe, expect, it } from "vitest";
import { costUsd, priced, pricesFor } from "../../../bridge/src/runner/adapters/pricing.ts";

describe("price table", () => {
  it("prices by the longest matching prefix, an unknown model as its provider's dearest, an override first", () => {
    expect(pricesFor("openai", "gpt-5.5")).toEqual({ input: 5, cachedInput: 0.5, output: 30 });
    expect(pricesFor("openai", "gpt-5")).toEqual({ input: 1.25, cachedInput: 0.125, output: 10 });
    expect(pricesFor("openai", "gpt-5-mini-2025-08-07")).toEqual({
      input: 0.25,
      cachedInput: 0.025,
      output: 2,
    });
    expect(pricesFor("openai", "gpt-6-sol-fast")).toEqual(pricesFor("openai", "gpt-6-sol"));
    expect(pricesFor("anthropic", "claude-opus-4-1")).toEqual({ input: 15, cachedInput: 1.5, output: 75 });
    expect(pricesFor("anthropic", "claude-opus-4-8")).toEqual({ input: 5, cachedInput: 0.5, output: 25 });
    expect(pricesFor("openai", "gpt-9-unknown")).toEqual(pricesFor("openai", "gpt-6-astra"));
    expect(pricesFor("openai", null).input).toBeGreaterThan(0);
    expect(pricesFor("google", "gemini-9")).toEqual(pricesFor("google", "gemini-3.1-pro-preview"));
    expect(pricesFor("openai", "gpt-5.5", { input: 1, output: 2 })).toEqual({
      input: 1,
      cachedInput: 1,
      output: 2,
    });
  });

  it("charges uncached input, cached input and output, in cents rounded up", () => {
    const prices = pricesFor("openai", "gpt-6-sol");
    const tokens = { input: 100_000, cached: 20_000, output: 2_000 };
    expect(costUsd(tokens, prices)).toBeCloseTo(0.184, 9);
    const meter = {
      provider: "openai",
      model: "gpt-6-sol",
      prices,
      before: { input: 0, cached: 0, output: 0 },
    };
    expect(priced(meter, tokens).costCents).toBe(19);
  });
});
