import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { PROMPTS } from "./prompts";
import { RESOURCES } from "./resources";
import { listToolsFromCache } from "./tool-list";
import { invokeTool, TOOLS, type ToolContext } from "./tools";

const SERVER_INFO = { name: "switchboard", version: "0.1.0" };

/** What the SDK hands each handler about the request it serves. */
export type McpRequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * The MCP server of one session: every tool of tools/index.ts registered the same way, each call going
 * through invokeTool as the caller of the request that carries it (`contextOf`: a session outlives
 * its requests). The cfworker validator because Ajv cannot compile schemas on workerd.
 */
export function buildMcpServer(contextOf: (extra: McpRequestExtra) => ToolContext): McpServer {
  const server = new McpServer(SERVER_INFO, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  for (const tool of TOOLS) {
    const config = { description: tool.description, annotations: tool.annotations };
    // A tool without input is called with the extra alone, one with input with (args, extra).
    if (tool.inputSchema === undefined)
      server.registerTool(tool.name, config, (extra) => invokeTool(tool, contextOf(extra), {}));
    else
      server.registerTool(tool.name, { ...config, inputSchema: tool.inputSchema }, (args, extra) =>
        invokeTool(tool, contextOf(extra), args ?? {}),
      );
  }
  listToolsFromCache(server, TOOLS);
  for (const resource of RESOURCES) {
    server.registerResource(
      resource.name,
      new ResourceTemplate(resource.uriTemplate, { list: undefined }),
      { description: resource.description, mimeType: resource.mimeType },
      (uri, variables, extra) => resource.read(contextOf(extra), uri, singleValues(variables)),
    );
  }
  for (const prompt of PROMPTS) {
    const { title, description, argsSchema } = prompt;
    server.registerPrompt(
      prompt.name,
      { title, description, argsSchema },
      (args: Record<string, string | undefined>, extra: McpRequestExtra) =>
        prompt.get(contextOf(extra), args ?? {}),
    );
  }
  return server;
}

/** A template variable may match a list (`{+path}`); ours never do, so the first value is the value. */
const singleValues = (variables: Record<string, string | string[]>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(variables).map(([name, value]) => [name, Array.isArray(value) ? (value[0] ?? "") : value]),
  );
