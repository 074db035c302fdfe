import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import {
  isJSONRPCRequest,
  type JSONRPCRequest,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { DirectTransport, type JsonRpcAnswer } from "./direct-transport";
import { buildMcpServer } from "./server";
import { TOOLS, type ToolContext } from "./tools";

/**
 * The direct path (docs/decisions.md, "MCP: reads answered in the Worker"). A request that changes
 * nothing and answers at once (a read-only tool, a listing, a resource, a prompt, ping) has nothing
 * to stream and nothing to resume, so it needs of its session only that it exists and is this key's.
 * The Worker asks the session object exactly that and answers the request itself, as JSON (which
 * the transport spec lets a server choose), instead of running it through the session's SSE
 * transport and event store. Everything else (writes, sends, GET streams, DELETE, notifications,
 * anything malformed) goes to the session object as before, which also answers every refusal.
 */

const READ_METHODS = new Set([
  "ping",
  "tools/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/list",
  "prompts/get",
]);
const READ_ONLY_TOOLS = new Set(
  TOOLS.filter((tool) => tool.annotations?.readOnlyHint === true).map((tool) => tool.name),
);

/** The transport's own admission rules: anything it would refuse is left for it to refuse. */
function passesTransportChecks(request: Request): boolean {
  const accept = request.headers.get("accept") ?? "";
  const version = request.headers.get("mcp-protocol-version");
  return (
    accept.includes("application/json") &&
    accept.includes("text/event-stream") &&
    (request.headers.get("content-type") ?? "").includes("application/json") &&
    (version === null || SUPPORTED_PROTOCOL_VERSIONS.includes(version))
  );
}

const isReadRequest = (message: JSONRPCRequest): boolean =>
  message.method === "tools/call"
    ? READ_ONLY_TOOLS.has(String(message.params?.name))
    : READ_METHODS.has(message.method);

/** The request when the direct path may answer it; null sends it to the session object. */
export function directRequestOf(request: Request, body: string): JSONRPCRequest | null {
  if (!passesTransportChecks(request)) return null;
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return null;
  }
  return isJSONRPCRequest(message) && isReadRequest(message) ? message : null;
}

interface DirectServer {
  transport: DirectTransport;
  contexts: WeakMap<AuthInfo, ToolContext>;
}

let directServer: Promise<DirectServer> | undefined;

/**
 * One server for the isolate's direct requests: registering every tool, resource and prompt is most
 * of what building a server costs, and none of it differs between sessions. It holds no session
 * state; each request brings its caller (found from the `authInfo` object the SDK passes along).
 */
function sharedServer(): Promise<DirectServer> {
  directServer ??= (async () => {
    const contexts = new WeakMap<AuthInfo, ToolContext>();
    const transport = new DirectTransport();
    const server = buildMcpServer((extra) => {
      const context = extra.authInfo && contexts.get(extra.authInfo);
      if (context === undefined) throw new Error("an MCP request reached a tool without its caller");
      return context;
    });
    await server.connect(transport);
    return { transport, contexts };
  })();
  return directServer;
}

/** Runs one read request through the SDK server as `context`'s caller; its JSON-RPC answer. */
export async function answerDirectly(message: JSONRPCRequest, context: ToolContext): Promise<JsonRpcAnswer> {
  const { transport, contexts } = await sharedServer();
  const authInfo: AuthInfo = { token: "", clientId: "switchboard", scopes: [] };
  contexts.set(authInfo, context);
  return transport.answer(message, authInfo);
}
