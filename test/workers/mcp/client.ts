// The official MCP SDK client against /mcp through the Worker's own fetch (dispatch), for tests.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { BASE, dispatch } from "../helpers";

export const MCP_URL = `${BASE}/mcp`;

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * `dispatch` as the client's fetch. dispatch ignores the abort signal, so an aborted request's body
 * is cut here, as a network client's would be: closing a client ends its open streams.
 */
export const abortableDispatch: Fetch = async (url, init) => {
  const response = await dispatch(new Request(url, init));
  const signal = init?.signal;
  if (!response.body || !signal) return response;
  return new Response(response.body.pipeThrough(new TransformStream(), { signal }), response);
};

/** A connected SDK client and its transport (whose `sessionId` is the issued Mcp-Session-Id). */
export async function connectMcp(headers: Record<string, string>, fetch: Fetch = abortableDispatch) {
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), {
    requestInit: { headers },
    fetch,
    reconnectionOptions: {
      initialReconnectionDelay: 10,
      maxReconnectionDelay: 100,
      reconnectionDelayGrowFactor: 1.5,
      maxRetries: 3,
    },
  });
  const client = new Client({ name: "switchboard-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

export const callTool = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

export const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");

/** An initialized client presenting `headers` (a key) on every request. */
export async function connect(headers: Record<string, string>): Promise<Client> {
  return (await connectMcp(headers)).client;
}

/** A successful result's JSON answer; fails the test with the tool's error text otherwise. */
export function jsonOf<T = Record<string, unknown>>(result: CallToolResult): T {
  if (result.isError) throw new Error(`tool error: ${textOf(result)}`);
  return JSON.parse(textOf(result)) as T;
}

export const PROTOCOL_VERSION = "2025-11-25";

/** One raw JSON-RPC POST to /mcp, as a client that speaks the transport by hand. */
export const rawPost = (headers: Record<string, string>, message: unknown) =>
  dispatch(
    new Request(MCP_URL, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        ...headers,
      },
      body: JSON.stringify(message),
    }),
  );

/** A session opened by a raw initialize: its id, with the initialize answer read to the end. */
export async function openRawSession(headers: Record<string, string>): Promise<string> {
  const response = await rawPost(headers, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "raw", version: "1" },
    },
  });
  if (response.status !== 200) throw new Error(`initialize answered ${response.status}`);
  await response.text();
  const id = response.headers.get("mcp-session-id");
  if (!id) throw new Error("no Mcp-Session-Id on the initialize answer");
  return id;
}
