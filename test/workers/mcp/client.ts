// The official MCP SDK client wired to the Worker in workerd: its HTTP requests go through the Worker's
// own fetch (dispatch), so a suite drives /mcp exactly as a remote MCP client would.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { BASE, dispatch } from "../helpers";

export const MCP_URL = `${BASE}/mcp`;

/** An initialized client presenting `headers` (a key) on every request. */
export async function connect(headers: Record<string, string>): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), {
    requestInit: { headers },
    fetch: (url, init) => dispatch(new Request(url, init)),
  });
  const client = new Client({ name: "switchboard-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

export const callTool = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

/** The result's text parts, joined. */
export const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");

/** A successful result's JSON answer; fails the test with the tool's error text otherwise. */
export function jsonOf<T = Record<string, unknown>>(result: CallToolResult): T {
  if (result.isError) throw new Error(`tool error: ${textOf(result)}`);
  return JSON.parse(textOf(result)) as T;
}
