import { controlTools } from "./control";
import type { AnyToolDefinition } from "./registry";
import { whatsappSendTools } from "./whatsapp-send";

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
export { sendApprovedMessages } from "./send-approval";

/** Every tool /mcp serves, in the order tools/list shows them (one line per domain's list). */
export const TOOLS: readonly AnyToolDefinition[] = [...controlTools, ...whatsappSendTools];
