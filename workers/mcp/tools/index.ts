import { controlTools } from "./control";
import type { AnyToolDefinition } from "./registry";
import { whatsappReadTools } from "./whatsapp-read";

export { invokeTool } from "./invoke";
export type {
  AnyToolDefinition,
  AppFetch,
  BoundFetch,
  McpCaller,
  ToolContext,
  ToolDomain,
  ToolScope,
} from "./registry";
export { TOOL_SCOPES } from "./registry";
export { type RestAnswer, toolResultOf } from "./rest";
export { chatHistory } from "./whatsapp-read";

/** Every tool /mcp serves, in the order tools/list shows them (one line per domain's list). */
export const TOOLS: readonly AnyToolDefinition[] = [...controlTools, ...whatsappReadTools];
