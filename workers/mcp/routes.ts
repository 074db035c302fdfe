import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Hono } from "hono";
import type { AppEnv, Env } from "../core/env";
import { type CredentialProblem, mcpCallerOf } from "./credentials";
import { buildMcpServer } from "./server";
import { type AppFetch, type BoundFetch, type McpCaller, sendApprovedMessages } from "./tools";

/**
 * The MCP server at /mcp (issue 27, docs/mcp.md): Streamable HTTP, stateless JSON responses for now;
 * each tool is a REST call made in-process as the caller (tools/, rest.ts).
 */

/** A JSON-RPC error outside any request (the transport level): `id` is null. */
const jsonRpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });

/**
 * 401 per the MCP authorization spec: a Bearer challenge. There is no OAuth server to point at
 * (resource_metadata): keys are created in the dashboard or by POST /api/agents/{agentId}/keys.
 */
function unauthorizedAnswer(problem: CredentialProblem): Response {
  const challenge =
    problem === "missing"
      ? 'Bearer realm="switchboard"'
      : 'Bearer realm="switchboard", error="invalid_token", error_description="invalid or revoked key"';
  const message =
    problem === "missing"
      ? "Missing key: send a user API key (X-API-Key or Authorization: Bearer) or an agent key (Authorization: Bearer swa_…)"
      : "Invalid or revoked key";
  return jsonRpcError(401, -32001, message, { "WWW-Authenticate": challenge });
}

/**
 * Stateless: a fresh server and transport per request (the SDK refuses to reuse a stateless one), JSON
 * responses, no session id. Sessions and resumable SSE belong in a Durable Object (docs/decisions.md).
 */
async function answerMcpRequest(
  request: Request,
  appFetch: BoundFetch,
  caller: McpCaller,
  env: Env,
): Promise<Response> {
  const server = buildMcpServer({ appFetch, env, origin: new URL(request.url).origin, caller });
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  return transport.handleRequest(request);
}

/** /mcp, mounted in app.ts before the dashboard (which owns every other path). */
export function mcpRoutes(appFetch: AppFetch) {
  // Approving an agent's held WhatsApp send sends it, through the same in-process REST calls.
  sendApprovedMessages(appFetch);
  const router = new Hono<AppEnv>();
  router.all("/", async (c) => {
    const caller = await mcpCallerOf(c.env, c.req.raw);
    if (typeof caller === "string") return unauthorizedAnswer(caller);
    // Without sessions there is no server-initiated stream to open (GET) nor session to end (DELETE);
    // the spec lets a server answer both with 405, and MCP clients carry on over POST.
    if (c.req.method === "GET" || c.req.method === "DELETE") {
      return jsonRpcError(405, -32000, `${c.req.method} is not supported: this server has no sessions yet`, {
        Allow: "POST",
      });
    }
    const bound: BoundFetch = (request) => appFetch(request, c.env, c.executionCtx);
    return answerMcpRequest(c.req.raw, bound, caller, c.env);
  });
  return router;
}
