/**
 * What tokens cost, for the CLIs that report tokens but no cost (Codex, Gemini CLI; OpenCode for a
 * model it has no prices for):
 * cost = uncached input × input price + cached input × cached price + output × output price, in whole
 * cents rounded up (a budget never undercounts). The table is versioned: a run's usage records the
 * version it was priced with, so a later price change explains an old cost. An agent overrides the
 * prices of its own model with adapterConfig.pricing (USD per million tokens). A model the table does
 * not know is priced as its provider's fallback entry, never as free.
 */
import { z } from "zod";

export const PRICE_TABLE_VERSION = "2025-11-01";

/** USD per million tokens. */
export interface Prices {
  input: number;
  cachedInput: number;
  output: number;
}

export interface TokenCounts {
  /** All input tokens, cached ones included (the OpenAI and Gemini way of counting). */
  input: number;
  cached: number;
  output: number;
}

/** What an adapter's parser needs from its launch to price a run (types.ts Launch.meter). */
export interface Meter {
  provider: string;
  model: string | null;
  prices: Prices;
  /** The tokens a resumed session had already reported (CLIs that count per session, not per run). */
  before: TokenCounts;
  /** The agent set these prices itself (adapterConfig.pricing): they win over a cost the CLI reports. */
  overridden?: boolean;
}

export const NO_TOKENS: TokenCounts = { input: 0, cached: 0, output: 0 };

/** Public list prices on the version date; the first entry that prefixes the model name wins. */
const TABLE: Readonly<Record<string, ReadonlyArray<readonly [string, Prices]>>> = {
  openai: [
    ["gpt-5-nano", { input: 0.05, cachedInput: 0.005, output: 0.4 }],
    ["gpt-5-mini", { input: 0.25, cachedInput: 0.025, output: 2 }],
    ["gpt-5", { input: 1.25, cachedInput: 0.125, output: 10 }],
    ["gpt-4.1-mini", { input: 0.4, cachedInput: 0.1, output: 1.6 }],
    ["gpt-4.1", { input: 2, cachedInput: 0.5, output: 8 }],
    ["o4-mini", { input: 1.1, cachedInput: 0.275, output: 4.4 }],
    ["o3", { input: 2, cachedInput: 0.5, output: 8 }],
  ],
  google: [
    ["gemini-2.5-flash-lite", { input: 0.1, cachedInput: 0.025, output: 0.4 }],
    ["gemini-2.5-flash", { input: 0.3, cachedInput: 0.075, output: 2.5 }],
    ["gemini-2.5-pro", { input: 1.25, cachedInput: 0.31, output: 10 }],
  ],
  anthropic: [
    ["claude-haiku-4-5", { input: 1, cachedInput: 0.1, output: 5 }],
    ["claude-3-5-haiku", { input: 0.8, cachedInput: 0.08, output: 4 }],
    ["claude-sonnet-4", { input: 3, cachedInput: 0.3, output: 15 }],
    ["claude-opus-4", { input: 15, cachedInput: 1.5, output: 75 }],
  ],
};

/** A model the table does not know: its provider's dearest common model. */
const FALLBACK: Readonly<Record<string, Prices>> = {
  openai: { input: 1.25, cachedInput: 0.125, output: 10 },
  google: { input: 1.25, cachedInput: 0.31, output: 10 },
  anthropic: { input: 15, cachedInput: 1.5, output: 75 },
};

export const PricesSchema = z.object({
  input: z.number().min(0),
  cachedInput: z.number().min(0).optional(),
  output: z.number().min(0),
});

export function pricesFor(
  provider: string,
  model: string | null,
  override?: z.infer<typeof PricesSchema>,
): Prices {
  if (override) return { ...override, cachedInput: override.cachedInput ?? override.input };
  const entry = (TABLE[provider] ?? []).find(([prefix]) => model?.startsWith(prefix));
  return entry?.[1] ?? FALLBACK[provider] ?? FALLBACK.openai ?? { input: 0, cachedInput: 0, output: 0 };
}

/** Tokens of this run: the CLI's total minus what the session had before (never below zero). */
export const tokensSince = (total: TokenCounts, before: TokenCounts): TokenCounts => ({
  input: Math.max(0, total.input - before.input),
  cached: Math.max(0, total.cached - before.cached),
  output: Math.max(0, total.output - before.output),
});

export function costUsd(tokens: TokenCounts, prices: Prices): number {
  const uncached = Math.max(0, tokens.input - tokens.cached);
  return (uncached * prices.input + tokens.cached * prices.cachedInput + tokens.output * prices.output) / 1e6;
}

/** The usage a run records (read by the edge's cost event) and its cost in whole cents, rounded up. */
export function priced(
  meter: Meter,
  total: TokenCounts,
): { usage: Record<string, unknown>; costCents: number } {
  const tokens = tokensSince(total, meter.before);
  const usd = costUsd(tokens, meter.prices);
  return {
    usage: {
      provider: meter.provider,
      model: meter.model,
      inputTokens: Math.max(0, tokens.input - tokens.cached),
      cachedInputTokens: tokens.cached,
      outputTokens: tokens.output,
      costUsd: usd,
      priceTable: PRICE_TABLE_VERSION,
      pricesPerMTok: meter.prices,
    },
    costCents: Math.ceil(Math.round(usd * 1e6) / 1e4),
  };
}
