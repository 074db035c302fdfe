import { isInitializeRequest, type JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import { type Context, Hono } from "hono";
import { randomToken, sha256Hex } from "../auth/crypto";
import { type LiveOwner, noteLiveSocket, ownerTag } from "../auth/live-sockets";
import type { Actor } from "../core/actor";
import type { AppEnv, Env } from "../core/env";
import { resourceMetadataUrl } from "../oauth";
import { registerAppFetch } from "./app-fetch";
import { type CredentialProblem, credentialIdentity, mcpCallerOf } from "./credentials";
import { answerDirectly, directRequestOf } from "./direct";
import {
  jsonRpcError,
  mcpSessionObject,
  SESSION_ID_PATTERN,
  type SessionCredential,
  sessionNotFound,
} from "./session-object";
import { type AppFetch, type McpCaller, sendApprovedMessages, type ToolContext } from "./tools";

/**
 * The MCP server at /mcp (issue 27, docs/mcp.md): Streamable HTTP with sessions. This Worker route
 * checks the Origin and the key, then hands the request to the session's Durable Object
 * (durable-objects/mcp-session.ts), which runs the SDK's server and transport; each tool is a REST
 * call made in-process as the caller (tools/, rest.ts).
 */

const ALLOWED_METHODS = "GET, POST, DELETE";

/**
 * 401 per the MCP authorization spec: a Bearer challenge naming the protected resource metadata
 * (RFC 9728), from which an OAuth client finds this Worker's authorization server (workers/oauth).
 * Keys are created in the dashboard or by POST /api/agents/{agentId}/keys.
 */
function unauthorizedAnswer(problem: CredentialProblem, origin: string): Response {
  const metadata = `resource_metadata="${resourceMetadataUrl(origin)}"`;
  const challenge =
    problem === "missing"
      ? `Bearer realm="switchboard", ${metadata}`
      : `Bearer realm="switchboard", error="invalid_token", error_description="invalid or revoked key", ${metadata}`;
  const message =
    problem === "missing"
      ? "Missing key: send a user API key (X-API-Key or Authorization: Bearer) or an agent key (Authorization: Bearer swa_…)"
      : "Invalid or revoked key";
  return jsonRpcError(401, -32001, message, { "WWW-Authenticate": challenge });
}

/**
 * The spec's DNS-rebinding rule: an `Origin` other than this server's own is refused. MCP clients
 * outside a browser (CLIs, the SDK) send none and pass.
 */
function isForeignOrigin(request: Request): boolean {
  const origin = request.headers.get("Origin");
  return origin !== null && origin !== new URL(request.url).origin;
}

/** Whose key it is, for cutting the session when their access ends. */
const ownerOf = (actor: Actor): LiveOwner =>
  actor.type === "agent" ? { kind: "agent", id: actor.agentId } : { kind: "user", id: actor.userId };

/** Whose key it is, as the session remembers it (a fingerprint, never the key). */
async function credentialOf(request: Request, caller: McpCaller): Promise<SessionCredential> {
  const { actor } = caller;
  const owner = ownerOf(actor);
  return {
    fingerprint: await sha256Hex(credentialIdentity(request, caller)),
    ownerTag: ownerTag(owner),
    companyId: actor.type === "agent" ? actor.companyId : null,
  };
}

/** The initialize request's JSON text, or the answer to a sessionless request that is not one. */
async function initializeOf(request: Request): Promise<string | Response> {
  const text = await request.text();
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return jsonRpcError(400, -32700, "Parse error: Invalid JSON");
  }
  if (!isInitializeRequest(message))
    return jsonRpcError(400, -32000, "Bad Request: Mcp-Session-Id header is required (initialize first)");
  return text;
}

/**
 * A request without `Mcp-Session-Id` may only be an initialize: it opens a session under a new random
 * id, noted with the key's owner first so that a revocation reaches it (auth/live-sockets.ts).
 */
async function openSession(
  env: Env,
  request: Request,
  caller: McpCaller,
  credential: SessionCredential,
): Promise<Response> {
  if (request.method !== "POST")
    return jsonRpcError(400, -32000, "Bad Request: Mcp-Session-Id header is required");
  const initialize = await initializeOf(request);
  if (initialize instanceof Response) return initialize;
  const sessionId = randomToken(32);
  await noteLiveSocket(env, ownerOf(caller.actor), {
    binding: "MCP_SESSION",
    name: sessionId,
    companyId: credential.companyId,
  });
  const bodiless = new Request(request.url, { method: "POST", headers: request.headers });
  return mcpSessionObject(env, sessionId).open(sessionId, bodiless, initialize, caller, credential);
}

/**
 * The request as it crosses to the session object, with the body already read here (or none): its
 * abort signal stays here (RPC cannot carry one; a client that goes away cancels the response body
 * instead, which does cross).
 */
const forwarded = (request: Request, body: string | null): Request =>
  new Request(request.url, { method: request.method, headers: request.headers, body });

/**
 * A read answered here (direct.ts) once the session object confirms the session is this key's: one
 * small round trip to it instead of the whole request through its transport.
 */
async function answerInSession(
  env: Env,
  sessionId: string,
  fingerprint: string,
  message: JSONRPCRequest,
  context: ToolContext,
): Promise<Response> {
  if (!(await mcpSessionObject(env, sessionId).admit(fingerprint))) return sessionNotFound();
  return Response.json(await answerDirectly(message, context), { headers: { "mcp-session-id": sessionId } });
}

/** A Durable Object's response has immutable headers; the app's middleware adds to every response. */
const relayed = (response: Response) =>
  new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers: new Headers(response.headers),
  });

/** /mcp, mounted in app.ts before the dashboard (which owns every other path). */
export function mcpRoutes(appFetch: AppFetch) {
  const toolContextOf = (c: Context<AppEnv>, caller: McpCaller): ToolContext => ({
    appFetch: (request) => appFetch(request, c.env, c.executionCtx),
    env: c.env,
    origin: new URL(c.req.url).origin,
    caller,
    defer: (promise) => c.executionCtx.waitUntil(promise),
  });
  registerAppFetch(appFetch);
  // Approving an agent's held WhatsApp send sends it, through the same in-process REST calls.
  sendApprovedMessages(appFetch);
  const router = new Hono<AppEnv>();
  router.all("/", async (c) => {
    const request = c.req.raw;
    if (isForeignOrigin(request))
      return jsonRpcError(403, -32000, "Forbidden: a cross-origin request (Origin header)");
    const caller = await mcpCallerOf(c.env, request);
    if (typeof caller === "string") return unauthorizedAnswer(caller, new URL(request.url).origin);
    if (!["GET", "POST", "DELETE"].includes(request.method))
      return jsonRpcError(405, -32000, "Method not allowed.", { Allow: ALLOWED_METHODS });
    const credential = await credentialOf(request, caller);
    const sessionId = request.headers.get("mcp-session-id");
    if (sessionId === null) return relayed(await openSession(c.env, request, caller, credential));
    if (!SESSION_ID_PATTERN.test(sessionId)) return sessionNotFound();
    // A GET opens a long-lived stream: noted again (an upsert), since a cut takes the session's note
    // while keeping the session, and a later revocation must still find the stream.
    if (request.method === "GET")
      await noteLiveSocket(c.env, ownerOf(caller.actor), {
        binding: "MCP_SESSION",
        name: sessionId,
        companyId: credential.companyId,
      });
    const body = request.method === "POST" ? await request.text() : null;
    const direct = body === null ? null : directRequestOf(request, body);
    if (direct !== null)
      return answerInSession(c.env, sessionId, credential.fingerprint, direct, toolContextOf(c, caller));
    return relayed(
      await mcpSessionObject(c.env, sessionId).serve(forwarded(request, body), caller, credential),
    );
  });
  return router;
}
