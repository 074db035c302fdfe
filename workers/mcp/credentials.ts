import { AGENT_KEY_PREFIX } from "../auth/agent-key-format";
import { actorFromAgentKey } from "../auth/agent-key-store";
import { principalFromApiKey } from "../auth/api-key-store";
import { API_KEY_HEADER } from "../auth/middleware";
import type { AgentActor } from "../core/actor";
import type { Env } from "../core/env";
import { grantOfPrincipal, type Principal } from "../core/principal";
import type { KeyGrant } from "../core/scopes";
import { database } from "../db/client";
import { looksLikeOAuthToken, principalFromOAuthToken } from "../oauth";
import type { McpCaller } from "./tools";

export type CredentialProblem = "missing" | "invalid";

export function presentedKey(request: Request): string | undefined {
  const apiKey = request.headers.get(API_KEY_HEADER)?.trim();
  if (apiKey) return apiKey;
  return request.headers.get("Authorization")?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
}

/**
 * What an agent key allows over MCP: reading and working its company's control plane, and WhatsApp
 * sends (which the company's policy governs separately); never admin. Over REST an agent's role
 * decides, as before.
 */
const agentGrant = (actor: AgentActor): KeyGrant => ({
  scopes: ["read", "control", "send"],
  sessionId: null,
  companyId: actor.companyId,
  expiresAt: null,
});

/**
 * Who the request's key proves, or why there is nobody. Never a cookie: MCP clients send keys.
 * Answered like a REST read (the isolate's recent answer for this key, under a second old; a revoked
 * key is forgotten at once): this is only the door. Every tool acts through a REST call that checks
 * the key again by the REST rules, so a write still asks the Keyring. Asking it here as well cost one
 * Keyring round trip on every MCP message (bench/mcp.mjs, docs/decisions.md). When the Keyring was
 * asked and the key's `last_used_at` is due (at most once a minute per key, as over REST), the write
 * is awaited, so a key used only over MCP shows when it was used: not left floating, where workerd
 * may cancel it with the request, nor in `waitUntil`, which would keep a cut stream's request alive.
 */
export async function mcpCallerOf(env: Env, request: Request): Promise<McpCaller | CredentialProblem> {
  const key = presentedKey(request);
  if (key === undefined) return "missing";
  const db = database(env.DB);
  if (key.startsWith(AGENT_KEY_PREFIX)) {
    const found = await actorFromAgentKey(env, db, key, { forRead: true });
    if (!found) return "invalid";
    await touched(found.touch);
    return {
      actor: found.actor,
      grant: agentGrant(found.actor),
      headers: { Authorization: `Bearer ${key}` },
    };
  }
  if (looksLikeOAuthToken(key)) {
    const principal = await principalFromOAuthToken(env, new URL(request.url).origin, key);
    // REST never accepts the token itself: its calls carry the proved principal, vouched.
    return principal === null ? "invalid" : { ...boardCaller(principal, {}), principal };
  }
  const found = await principalFromApiKey(env, db, key, { forRead: true });
  if (!found) return "invalid";
  await touched(found.touch);
  return boardCaller(found.principal, { [API_KEY_HEADER]: key });
}

/** A user's caller (full key, scoped key or OAuth token): the board actor, limited as the grant says. */
function boardCaller(principal: Principal, headers: Record<string, string>): McpCaller {
  const { user } = principal;
  const grant = grantOfPrincipal(principal);
  return {
    actor: {
      type: "board",
      userId: user.id,
      user,
      mutating: true,
      ...(grant?.companyId ? { onlyCompanyId: grant.companyId } : {}),
    },
    grant,
    headers,
  };
}

/** A due `last_used_at` write, done; its failure is no reason to refuse the request. */
async function touched(touch: Promise<unknown> | undefined): Promise<void> {
  await touch?.catch(() => undefined);
}

/**
 * What a session is bound to: the key itself, or for an OAuth token its grant, so that the hourly
 * refresh (a new access token of the same grant) keeps the client's session. A revoked grant's tokens
 * are refused at the door before this matters.
 */
export const credentialIdentity = (request: Request, caller: McpCaller): string =>
  caller.principal?.via === "api_key" ? caller.principal.apiKeyId : (presentedKey(request) ?? "");
