import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { auditToolCall } from "./audit";
import type { AnyToolDefinition, ToolContext } from "./registry";

/**
 * Every tool call goes through here, after the SDK has validated the arguments against the tool's
 * schema: the one place where what wraps all tools (the key's scope, the activity log) belongs.
 */
export async function invokeTool(
  tool: AnyToolDefinition,
  ctx: ToolContext,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return auditToolCall(tool, ctx, args, () => tool.run(ctx, args));
}
