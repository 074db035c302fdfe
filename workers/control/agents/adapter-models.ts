import type { ADAPTER_TYPES } from "../../db/schema";

export type AdapterType = (typeof ADAPTER_TYPES)[number];
export interface ModelOption {
  id: string;
  label: string;
  default?: boolean;
}

/**
 * A static catalogue: both adapters run a local CLI, which picks among these models. The first of
 * each list is the default an agent without adapterConfig.model runs with.
 */
export const ADAPTER_MODELS: Record<AdapterType, readonly ModelOption[]> = {
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
