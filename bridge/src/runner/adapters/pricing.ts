/**
 * What tokens cost, for the CLIs that report tokens but no cost (Codex, Gemini CLI; OpenCode for a
 * model it has no prices for):
 * cost = uncached input × input price + cached input × cached price + output × output price, in whole
 * cents rounded up (a budget never undercounts). The table is versioned: a run's usage records the
 * version it was priced with, so a later price change explains an old cost. An agent overrides the
 * prices of its own model with adapterConfig.pricing (USD per million tokens). A model the table does
 * not know is priced as its provider's fallback entry, never as free.
 */
import type { z } from "zod";
import { ModelPriceSchema, type ModelPrices } from "../../protocol/runner.ts";

export const PRICE_TABLE_VERSION = "2026-11-25";

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

const p = (input: number, cachedInput: number, output: number): Prices => ({ input, cachedInput, output });

/**
 * List prices on the version date, by model name prefix; the longest prefix that matches wins (so
 * "gpt-5.5" is not priced as "gpt-5"). Sources, read off the pinned CLIs rather than guessed:
 * - openai, google: the models list OpenCode 1.18.33 ships (a models.dev snapshot; `opencode models
 *   <provider> --verbose` prints it), for every model the pinned Codex 0.169.0 and Gemini CLI 0.61.0
 *   know. ESTIMATED, because neither list prices them: gpt-6.1-sol (as gpt-6-sol), gpt-6.1-terra (as
 *   gpt-5.6-terra), gemini-3-pro-preview (as gemini-3.1-pro-preview).
 * - anthropic: Claude Code 2.1.331's own model catalogue (its pricing tiers, e.g.
 *   tier_4_20_cache_read_0_20 for claude-opus-5-5), which agrees with OpenCode's list where both have
 *   a model; cache reads at a tenth of input where the tier does not say. ESTIMATED: claude-haiku-5-5
 *   (its tier has no numbers; as claude-haiku-4-5). Claude Code reports its own cost, so these price
 *   only OpenCode runs of Anthropic models that OpenCode has no prices for.
 * A "-fast" or "-pro" variant the table does not list is priced as its base model.
 */
const TABLE: Readonly<Record<string, ReadonlyArray<readonly [string, Prices]>>> = {
  openai: [
    ["gpt-6.1-sol", p(2, 0.2, 10)],
    ["gpt-6.1-terra", p(2, 0.2, 12)],
    ["gpt-6-astra", p(10, 1, 50)],
    ["gpt-6-sol", p(2, 0.2, 10)],
    ["gpt-6-luna", p(0.1, 0.01, 0.5)],
    ["gpt-5.6", p(4, 0.4, 20)],
    ["gpt-5.6-sol", p(4, 0.4, 20)],
    ["gpt-5.6-terra", p(2, 0.2, 12)],
    ["gpt-5.6-luna", p(0.2, 0.02, 1.2)],
    ["gpt-5.5", p(5, 0.5, 30)],
    ["gpt-5.5-pro", p(30, 30, 180)],
    ["gpt-5.4", p(2.5, 0.25, 15)],
    ["gpt-5.4-mini", p(0.75, 0.075, 4.5)],
    ["gpt-5.4-nano", p(0.2, 0.02, 1.25)],
    ["gpt-5.3-codex", p(1.75, 0.175, 14)],
    ["gpt-5.2", p(1.75, 0.175, 14)],
    ["gpt-5.1", p(1.25, 0.125, 10)],
    ["gpt-5", p(1.25, 0.125, 10)],
    ["gpt-5-mini", p(0.25, 0.025, 2)],
    ["gpt-5-nano", p(0.05, 0.005, 0.4)],
    ["gpt-daybreak-blue", p(4, 0.4, 20)],
    ["gpt-daybreak-red", p(12.5, 1.25, 75)],
    ["gpt-4.1", p(2, 0.5, 8)],
    ["gpt-4.1-mini", p(0.4, 0.1, 1.6)],
    ["o4-mini", p(1.1, 0.275, 4.4)],
    ["o3", p(2, 0.5, 8)],
  ],
  google: [
    ["gemini-3.8-flash", p(0.75, 0.075, 3.75)],
    ["gemini-3.7-flash", p(0.75, 0.075, 3.75)],
    ["gemini-3.6-flash", p(0.75, 0.075, 3.75)],
    ["gemini-3.5-flash", p(1.5, 0.15, 9)],
    ["gemini-3.5-flash-lite", p(0.3, 0.03, 2.5)],
    ["gemini-3.1-flash-lite", p(0.25, 0.025, 1.5)],
    ["gemini-3.1-pro", p(2, 0.2, 12)],
    ["gemini-3-pro", p(2, 0.2, 12)],
    ["gemini-3-flash", p(0.5, 0.05, 3)],
    ["gemini-2.5-pro", p(1.25, 0.125, 10)],
    ["gemini-2.5-flash", p(0.3, 0.03, 2.5)],
    ["gemini-2.5-flash-lite", p(0.1, 0.01, 0.4)],
    ["gemma-4", p(0, 0, 0)],
  ],
  anthropic: [
    ["claude-fable-5-2", p(8, 0.2, 40)],
    ["claude-fable-5-1", p(10, 0.25, 50)],
    ["claude-fable-5", p(10, 1, 50)],
    ["claude-mythos-5-2", p(8, 0.2, 40)],
    ["claude-mythos-5-1", p(10, 0.25, 50)],
    ["claude-mythos-5", p(10, 1, 50)],
    ["claude-opus-5-5", p(4, 0.2, 20)],
    ["claude-opus-5", p(5, 0.5, 25)],
    ["claude-opus-4-5", p(5, 0.5, 25)],
    ["claude-opus-4-6", p(5, 0.5, 25)],
    ["claude-opus-4-7", p(5, 0.5, 25)],
    ["claude-opus-4-8", p(5, 0.5, 25)],
    ["claude-opus-4", p(15, 1.5, 75)],
    ["claude-sonnet-5-5", p(2, 0.1, 10)],
    ["claude-sonnet-5", p(2, 0.2, 10)],
    ["claude-sonnet-4", p(3, 0.3, 15)],
    ["claude-haiku-5-5", p(1, 0.1, 5)],
    ["claude-haiku-4-5", p(1, 0.1, 5)],
    ["claude-3-5-haiku", p(0.8, 0.08, 4)],
  ],
};

/**
 * A model the table does not know: its provider's dearest model in common use, so that a budget
 * never undercounts (an agent whose model is cheaper sets adapterConfig.pricing).
 */
const FALLBACK: Readonly<Record<string, Prices>> = {
  openai: p(10, 1, 50),
  google: p(2, 0.2, 12),
  anthropic: p(15, 1.5, 75),
};

/** The agent's own prices (adapterConfig.pricing): the wire's shape for a price. */
export const PricesSchema = ModelPriceSchema;

/** Dollars to whole cents, rounded up: a budget never undercounts what a run spent. */
export const usdToCents = (usd: number): number => Math.ceil(Math.round(usd * 1e6) / 1e4);

/**
 * How a run is priced: the prices chosen for it (chosenPrices: the agent's, else the company's), which then also
 * win over a cost the CLI reports; else the table's for the model. `before`: what a resumed session had
 * already counted.
 */
export function meterFor(
  provider: string,
  model: string | null,
  pricing?: z.infer<typeof PricesSchema>,
  before: TokenCounts = NO_TOKENS,
): Meter {
  return {
    provider,
    model,
    prices: pricesFor(provider, model, pricing),
    before,
    ...(pricing ? { overridden: true } : {}),
  };
}

/**
 * The prices a run's own config wins with: the agent's (adapterConfig.pricing), else the company's for
 * the provider and model, else for the provider's `*` (RunAssignment.modelPrices); undefined: the
 * CLI's cost or the table decide.
 */
export function chosenPrices(
  own: z.infer<typeof PricesSchema> | undefined,
  company: ModelPrices | undefined,
  provider: string,
  model: string | null,
): z.infer<typeof PricesSchema> | undefined {
  if (own) return own;
  const forProvider = company?.[provider];
  return (model === null ? undefined : forProvider?.[model]) ?? forProvider?.["*"];
}

export function pricesFor(
  provider: string,
  model: string | null,
  override?: z.infer<typeof PricesSchema>,
): Prices {
  if (override) return { ...override, cachedInput: override.cachedInput ?? override.input };
  return longestPrefix(provider, model) ?? FALLBACK[provider] ?? FALLBACK.openai ?? p(0, 0, 0);
}

function longestPrefix(provider: string, model: string | null): Prices | undefined {
  if (!model) return undefined;
  let best: readonly [string, Prices] | undefined;
  for (const entry of TABLE[provider] ?? [])
    if (model.startsWith(entry[0]) && entry[0].length > (best?.[0].length ?? 0)) best = entry;
  return best?.[1];
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
): { usage: Record<string, unknown>; costUsd: number; costCents: number } {
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
    costUsd: usd,
    costCents: usdToCents(usd),
  };
}
