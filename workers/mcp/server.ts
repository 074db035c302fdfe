import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { RESOURCES } from "./resources";
import { listToolsFromCache } from "./tool-list";
import { invokeTool, TOOLS, type ToolContext } from "./tools";

const SERVER_INFO = { name: "switchboard", version: "0.1.0" };

/**
 * The MCP server for one caller: every tool of tools/index.ts registered the same way, each call going
 * through invokeTool. The cfworker validator because Ajv cannot compile schemas on workerd.
 */
export function buildMcpServer(ctx: ToolContext): McpServer {
  const server = new McpServer(SERVER_INFO, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  for (const tool of TOOLS) {
    server.registerTool(
      tool.name,
      { description: tool.description, inputSchema: tool.inputSchema, annotations: tool.annotations },
      (args: Record<string, unknown>) => invokeTool(tool, ctx, args ?? {}),
    );
  }
  listToolsFromCache(server, TOOLS);
  for (const resource of RESOURCES) {
    server.registerResource(
      resource.name,
      new ResourceTemplate(resource.uriTemplate, { list: undefined }),
      { description: resource.description, mimeType: resource.mimeType },
      (uri, variables) => resource.read(ctx, uri, singleValues(variables)),
    );
  }
  return server;
}

/** A template variable may match a list (`{+path}`); ours never do, so the first value is the value. */
const singleValues = (variables: Record<string, string | string[]>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(variables).map(([name, value]) => [name, Array.isArray(value) ? (value[0] ?? "") : value]),
  );
