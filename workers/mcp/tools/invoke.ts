import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { grantAllows } from "../../core/scopes";
import { auditToolCall } from "./audit";
import type { AnyToolDefinition, ToolContext } from "./registry";

/**
 * A tool the key's scopes do not allow, refused before anything runs: an MCP tool error the model can
 * read, naming the scope it needs. The REST routes the tool calls would refuse it too (403), but
 * never after a tool's earlier calls: a refusal here is never a partial action.
 */
function scopeRefusal(tool: AnyToolDefinition, ctx: ToolContext): CallToolResult | null {
  const { grant } = ctx.caller;
  if (grantAllows(grant, tool.scope)) return null;
  const has = grant?.scopes.join(", ") ?? "";
  const text =
    `Refused: ${tool.name} needs a key with the "${tool.scope}" scope; this key has: ${has}. ` +
    "Nothing was done. Ask the key's owner for a key with that scope (dashboard: API key → Scoped keys) or use another tool.";
  return { isError: true, content: [{ type: "text", text }] };
}

/**
 * Every tool call goes through here, after the SDK has validated the arguments against the tool's
 * schema: the one place where what wraps all tools (the key's scope, the activity log) belongs.
 */
export async function invokeTool(
  tool: AnyToolDefinition,
  ctx: ToolContext,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return auditToolCall(tool, ctx, args, async () => scopeRefusal(tool, ctx) ?? tool.run(ctx, args));
}
