// The official MCP SDK client over Streamable HTTP, its requests dispatched into the Worker in workerd.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { BASE, dispatch } from "../helpers";

export async function connectMcp(headers: Record<string, string>): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
    requestInit: { headers },
    fetch: (url, init) => dispatch(new Request(url, init)),
  });
  const client = new Client({ name: "switchboard-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

export const callTool = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

export const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
