import type { ADAPTER_TYPES } from "../../db/schema";

export type AdapterType = (typeof ADAPTER_TYPES)[number];
export interface ModelOption {
  id: string;
  label: string;
  default?: boolean;
}

/**
 * A static catalogue of what each adapter's CLI accepts as adapterConfig.model; the first of each
 * list is marked default. claude_local: Claude Code's aliases (which follow the newest model of each
 * family) and full names. codex_local: models Codex accepts with `--model` (priced by the runner's
 * table, bridge/src/runner/adapters/pricing.ts). gemini_local: models Gemini CLI accepts with `--model`
 * (priced by the same table). opencode_local: `<provider>/<model>` as OpenCode's `--model` takes it
 * (any model of its models list; it prices them itself). `process` starts any command, so it has no list of its own.
 */
export const ADAPTER_MODELS: Record<AdapterType, readonly ModelOption[]> = {
  claude_local: [
    { id: "sonnet", label: "Claude Sonnet (latest)", default: true },
    { id: "opus", label: "Claude Opus (latest)" },
    { id: "haiku", label: "Claude Haiku (latest)" },
    { id: "claude-sonnet-4-5", label: "Claude Sonnet 4.5" },
    { id: "claude-opus-4-1", label: "Claude Opus 4.1" },
    { id: "claude-haiku-4-5", label: "Claude Haiku 4.5" },
  ],
  codex_local: [
    { id: "gpt-5-codex", label: "GPT-5 Codex", default: true },
    { id: "gpt-5", label: "GPT-5" },
    { id: "gpt-5-mini", label: "GPT-5 mini" },
    { id: "o4-mini", label: "o4-mini" },
  ],
  gemini_local: [
    { id: "gemini-2.5-pro", label: "Gemini 2.5 Pro", default: true },
    { id: "gemini-2.5-flash", label: "Gemini 2.5 Flash" },
    { id: "gemini-2.5-flash-lite", label: "Gemini 2.5 Flash-Lite" },
  ],
  opencode_local: [
    { id: "anthropic/claude-sonnet-4-5", label: "Claude Sonnet 4.5 (Anthropic)", default: true },
    { id: "anthropic/claude-opus-4-5", label: "Claude Opus 4.5 (Anthropic)" },
    { id: "anthropic/claude-haiku-4-5", label: "Claude Haiku 4.5 (Anthropic)" },
    { id: "openai/gpt-5", label: "GPT-5 (OpenAI)" },
    { id: "openai/gpt-5-mini", label: "GPT-5 mini (OpenAI)" },
    { id: "google/gemini-2.5-pro", label: "Gemini 2.5 Pro (Google)" },
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
};
