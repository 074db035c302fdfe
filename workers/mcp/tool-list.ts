import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { type AnyToolDefinition, toolInputJsonSchema } from "./tools";

/** What the SDK lists as the input of a tool registered without one (mcp.js, EMPTY_OBJECT_JSON_SCHEMA). */
const NO_INPUT: Tool["inputSchema"] = { type: "object", properties: {} };

/** What McpServer.registerTool records for every tool it registers (mcp.js), so lists it. */
const EXECUTION: Tool["execution"] = { taskSupport: "forbidden" };

/** Each definition's tools/list entry, built on first use and kept for the isolate's life. */
const listings = new WeakMap<AnyToolDefinition, Tool>();

/**
 * The entry the SDK's own tools/list handler builds for a registered tool (same conversion, same
 * options, plus the REST fields' `.openapi()` descriptions: tools/input-schema.ts), without converting
 * its zod schema to JSON Schema again on every request: that conversion was about half of a
 * tools/list's CPU in the Worker (bench/mcp.mjs).
 */
function listingOf(tool: AnyToolDefinition): Tool {
  let listing = listings.get(tool);
  if (!listing) {
    const inputSchema = tool.inputSchema ? toolInputJsonSchema(tool.inputSchema) : NO_INPUT;
    const { name, description, annotations } = tool;
    listing = { name, description, inputSchema, annotations, execution: EXECUTION };
    listings.set(tool, listing);
  }
  return listing;
}

/**
 * Makes `server` answer tools/list with `tools`, the definitions it registered (pass the same list:
 * a tool registered but not passed is callable yet unlisted), from the isolate's cache. Replaces the
 * SDK's handler, which registerTool installed; nothing to replace when no tool was registered.
 */
export function listToolsFromCache(server: McpServer, tools: readonly AnyToolDefinition[]): void {
  if (tools.length === 0) return;
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map(listingOf) }));
}
