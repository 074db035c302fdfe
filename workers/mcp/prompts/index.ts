import { heartbeatPrompt } from "./heartbeat";
import type { PromptDefinition } from "./registry";

export type { PromptDefinition } from "./registry";

/** Every prompt /mcp serves. */
export const PROMPTS: readonly PromptDefinition[] = [heartbeatPrompt];
