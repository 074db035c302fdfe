import type { LiveSocketHost } from "../auth/live-sockets";
import type { Env } from "../core/env";
import { namespaceOf } from "../core/env";
import type { McpCaller } from "./tools";

/** Which credential a request carries, as the session binds to it (never the key itself). */
export interface SessionCredential {
  /** SHA-256 (hex) of the presented key: a session answers only the key that created it. */
  fingerprint: string;
  /** Whose key it is (auth/live-sockets.ts `ownerTag`): the session ends when their access does. */
  ownerTag: string;
  /** The agent's company; null for a user key (it spans companies). */
  companyId: string | null;
}

/**
 * One MCP session (Streamable HTTP, `Mcp-Session-Id`), served by the McpSession object named by the
 * session id. The Worker authenticated the request and passes who it proved.
 */
export interface McpSessionObject extends LiveSocketHost {
  /** Opens the session with its `initialize` request (`initialize` is its JSON text; the body is unread). */
  open(
    sessionId: string,
    request: Request,
    initialize: string,
    caller: McpCaller,
    credential: SessionCredential,
  ): Promise<Response>;
  /** Any later request of the session (POST, GET, DELETE); 404 when the session is unknown or not this key's. */
  serve(request: Request, caller: McpCaller, credential: SessionCredential): Promise<Response>;
  /**
   * Whether the session exists and is this key's (noting the use), for a request the Worker answers
   * itself (direct.ts).
   */
  admit(fingerprint: string): Promise<boolean>;
}

/** Session ids are 32 random bytes, base64url: anything else is no session of ours. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export const mcpSessionObject = (env: Env, sessionId: string): DurableObjectStub<McpSessionObject> =>
  namespaceOf<McpSessionObject>(env.MCP_SESSION).getByName(sessionId);

/** The JSON-RPC error a transport answers outside any request (`id` null). */
export const jsonRpcError = (
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
) => Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });

/** What an unknown, ended or other key's session answers: the client starts a new one. */
export const sessionNotFound = () => jsonRpcError(404, -32001, "Session not found");
