import type { ADAPTER_TYPES } from "../../db/schema";

export type AdapterType = (typeof ADAPTER_TYPES)[number];
export interface ModelOption {
  id: string;
  label: string;
  default?: boolean;
}

/**
 * A static catalogue of what each adapter's pinned CLI knows as adapterConfig.model, read off the
 * installed packages (scripts/agent-clis.json pins them); the first of each list is the default.
 * - claude_local (Claude Code 2.1.331): its aliases, which follow the newest model of each family
 *   (sonnet → claude-sonnet-5-5 today), and the full names of its built-in catalogue.
 * - codex_local (Codex 0.169.0): the models its built-in list shows in the picker, in its order;
 *   gpt-6.1-sol is what Codex runs without --model. A model outside this list runs, but Codex logs
 *   "Model metadata … not found" on every run and guesses its limits.
 * - gemini_local (Gemini CLI 0.61.0): its valid models (VALID_GEMINI_MODELS) and its aliases;
 *   gemini-2.5-pro is its DEFAULT_GEMINI_MODEL.
 * - opencode_local (OpenCode 1.18.33): `<provider>/<model>` from the models list it ships (it prices
 *   them itself).
 * The runner prices Codex and Gemini CLI tokens with bridge/src/runner/adapters/pricing.ts, which
 * has an entry for each of these. `process` starts any command, so it has no list of its own.
 */
export const ADAPTER_MODELS: Record<AdapterType, readonly ModelOption[]> = {
  claude_local: [
    { id: "sonnet", label: "Claude Sonnet (latest)", default: true },
    { id: "opus", label: "Claude Opus (latest)" },
    { id: "haiku", label: "Claude Haiku (latest)" },
    { id: "fable", label: "Claude Fable (latest)" },
    { id: "claude-sonnet-5-5", label: "Claude Sonnet 5.5" },
    { id: "claude-opus-5-5", label: "Claude Opus 5.5" },
    { id: "claude-haiku-5-5", label: "Claude Haiku 5.5" },
    { id: "claude-fable-5-2", label: "Claude Fable 5.2" },
    { id: "claude-sonnet-4-6", label: "Claude Sonnet 4.6" },
    { id: "claude-opus-4-8", label: "Claude Opus 4.8" },
    { id: "claude-haiku-4-5", label: "Claude Haiku 4.5" },
  ],
  codex_local: [
    { id: "gpt-6.1-sol", label: "GPT-6.1-Sol", default: true },
    { id: "gpt-6-astra", label: "GPT-6-Astra" },
    { id: "gpt-6-sol", label: "GPT-6-Sol" },
    { id: "gpt-6-luna", label: "GPT-6-Luna" },
    { id: "gpt-5.6-sol", label: "GPT-5.6-Sol" },
    { id: "gpt-6.1-terra", label: "GPT-6.1 Terra" },
    { id: "gpt-5.6-terra", label: "GPT-5.6-Terra" },
    { id: "gpt-5.6-luna", label: "GPT-5.6-Luna" },
    { id: "gpt-5.5", label: "GPT-5.5" },
  ],
  gemini_local: [
    { id: "gemini-2.5-pro", label: "Gemini 2.5 Pro", default: true },
    { id: "auto", label: "Auto (the CLI picks per request)" },
    { id: "pro", label: "Gemini Pro (latest)" },
    { id: "flash", label: "Gemini Flash (latest)" },
    { id: "flash-lite", label: "Gemini Flash-Lite (latest)" },
    { id: "gemini-3.1-pro-preview", label: "Gemini 3.1 Pro (preview)" },
    { id: "gemini-3-pro-preview", label: "Gemini 3 Pro (preview)" },
    { id: "gemini-3.8-flash", label: "Gemini 3.8 Flash" },
    { id: "gemini-3.5-flash", label: "Gemini 3.5 Flash" },
    { id: "gemini-3-flash-preview", label: "Gemini 3 Flash (preview)" },
    { id: "gemini-3.5-flash-lite", label: "Gemini 3.5 Flash-Lite" },
    { id: "gemini-3.1-flash-lite", label: "Gemini 3.1 Flash-Lite" },
  ],
  opencode_local: [
    { id: "anthropic/claude-sonnet-5", label: "Claude Sonnet 5 (Anthropic)", default: true },
    { id: "anthropic/claude-opus-5-5", label: "Claude Opus 5.5 (Anthropic)" },
    { id: "anthropic/claude-fable-5-1", label: "Claude Fable 5.1 (Anthropic)" },
    { id: "anthropic/claude-haiku-4-5", label: "Claude Haiku 4.5 (Anthropic)" },
    { id: "openai/gpt-6-sol", label: "GPT-6 Sol (OpenAI)" },
    { id: "openai/gpt-6-astra", label: "GPT-6 Astra (OpenAI)" },
    { id: "openai/gpt-6-luna", label: "GPT-6 Luna (OpenAI)" },
    { id: "google/gemini-3.1-pro-preview", label: "Gemini 3.1 Pro preview (Google)" },
    { id: "google/gemini-3.8-flash", label: "Gemini 3.8 Flash (Google)" },
  ],
  process: [],
  coder_local: [
    { id: "claude-sonnet-4-5", label: "Claude Sonnet 4.5", default: true },
    { id: "claude-opus-4-1", label: "Claude Opus 4.1" },
    { id: "claude-haiku-4-5", label: "Claude Haiku 4.5" },
    { id: "gpt-5-codex", label: "GPT-5 Codex" },
  ],
  assistant_local: [
    { id: "gpt-5", label: "GPT-5", default: true },
    { id: "gpt-5-mini", label: "GPT-5 mini" },
    { id: "claude-sonnet-4-5", label: "Claude Sonnet 4.5" },
  ],
  // An http agent picks its own model behind its URL.
  http: [],
};
