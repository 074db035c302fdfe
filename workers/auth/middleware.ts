import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import type { Actor, CredentialGuard } from "../core/actor";
import type { AppEnv } from "../core/env";
import { grantOfPrincipal, type Principal } from "../core/principal";
import { database } from "../db/client";
import type { Role } from "../db/schema";
import { forbidden, unauthorized } from "../http/errors";
import { apiFamilyOf } from "../http/family";
import { actorFromAgentKey } from "./agent-key-store";
import { principalFromApiKey } from "./api-key-store";
import { CredentialUnconfirmed } from "./credential-guard";
import { keyRefusal } from "./key-scopes";
import type { LiveOwner } from "./live-sockets";
import { isValidCsrfToken, principalFromSessionToken, SESSION_COOKIE } from "./session-store";

export const API_KEY_HEADER = "X-API-Key";
export const CSRF_HEADER = "X-CSRF-Token";

/** Routes reachable without credentials. Everything else under /api needs a key or a cookie. */
const PUBLIC_ROUTES: ReadonlyArray<{ method: string; path: RegExp }> = [
  { method: "GET", path: /^\/api\/health$/ },
  { method: "GET", path: /^\/api\/openapi\.json$/ },
  { method: "GET", path: /^\/api\/docs$/ },
  { method: "POST", path: /^\/api\/auth\/login$/ },
  { method: "POST", path: /^\/api\/auth\/logout$/ },
  // Sign-up by invite: the invite token is the credential (../control/members/signup-routes.ts).
  { method: "GET", path: /^\/api\/member-invites\/[^/]+\/signup$/ },
  { method: "POST", path: /^\/api\/member-invites\/[^/]+\/signup$/ },
  // A message's media by signed link: the signature is the credential (../media/signed-url.ts).
  { method: "GET", path: /^\/api\/media\/[^/]+\/[^/]+$/ },
  // Routine webhook fire: the HMAC signature over the body is the credential (../control/routines/webhook.ts).
  { method: "POST", path: /^\/api\/routine-triggers\/public\/[^/]+\/fire$/ },
];

export function isPublicRoute(method: string, path: string): boolean {
  const normalisedMethod = method === "HEAD" ? "GET" : method;
  return PUBLIC_ROUTES.some((route) => route.method === normalisedMethod && route.path.test(path));
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * A request that may be authenticated from the isolate's recent answer (user-key-reads.ts,
 * agent-key-reads.ts). Not a WebSocket upgrade: the socket it opens outlives the request, so it asks
 * the Keyring like a write.
 */
const isPlainRead = (c: Context<AppEnv>): boolean =>
  SAFE_METHODS.has(c.req.method) && c.req.header("Upgrade") === undefined;

/**
 * Writes whose commit carries a credential guard (credential-guard.ts): they may start from the
 * isolate's recent answer for their key, since their own D1 batch re-checks it. Their handlers run
 * under `withCredentialGuard`, and commit through `guardedBy` (create issue; checkout, update and
 * comment, whose IssueDO operations carry the guard into their one commit): the writes agents and
 * boards make most (issue 31).
 */
const GUARDED_WRITES: ReadonlyArray<{ method: string; path: RegExp }> = [
  { method: "POST", path: /^\/api\/companies\/[^/]+\/issues$/ },
  { method: "POST", path: /^\/api\/issues\/[^/]+\/checkout$/ },
  { method: "PATCH", path: /^\/api\/issues\/[^/]+$/ },
  { method: "POST", path: /^\/api\/issues\/[^/]+\/comments$/ },
];

const isGuardedWrite = (c: Context<AppEnv>): boolean =>
  c.req.header("Upgrade") === undefined &&
  GUARDED_WRITES.some((route) => route.method === c.req.method && route.path.test(c.req.path));

/** A key lookup may take the isolate's recent answer: a plain read, or a write its commit guards. */
const mayUseRecent = (c: Context<AppEnv>): boolean => isPlainRead(c) || isGuardedWrite(c);

/**
 * Resolves the caller from `X-API-Key` (tried first, and exclusively when present) or the session
 * cookie. API-key requests need no CSRF token; cookie requests that change state must send the
 * token from GET /api/auth/csrf in `X-CSRF-Token`.
 */
export async function resolvePrincipal(c: Context<AppEnv>): Promise<Principal | null> {
  const vouched = c.get("vouchedPrincipal");
  if (vouched) return vouched;
  const db = database(c.env.DB);
  const presentedKey = c.req.header(API_KEY_HEADER);
  if (presentedKey !== undefined) {
    const found = await principalFromApiKey(c.env, db, presentedKey.trim(), { forRead: mayUseRecent(c) });
    if (found?.touch) c.executionCtx.waitUntil(found.touch.catch(() => undefined));
    if (found?.recent && found.principal.via === "api_key" && !isPlainRead(c)) {
      const { apiKeyId, user } = found.principal;
      c.set("credentialGuard", { kind: "user", keyId: apiKeyId, userId: user.id, role: user.role });
    }
    return found?.principal ?? null;
  }
  const token = getCookie(c, SESSION_COOKIE);
  return token ? principalFromSessionToken(c.env, db, token) : null;
}

/** `Authorization: Bearer <token>`, the agents' credential transport (control plane only). */
function bearerToken(c: Context<AppEnv>): string | undefined {
  const header = c.req.header("Authorization");
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1];
}

/** An agent key authenticates control-plane routes only; the gateway never accepts one. */
async function authenticateAgent(c: Context<AppEnv>, token: string): Promise<void> {
  const found = await actorFromAgentKey(c.env, database(c.env.DB), token, { forRead: mayUseRecent(c) });
  if (!found) throw unauthorized("Missing, invalid or revoked agent key");
  if (found.touch) c.executionCtx.waitUntil(found.touch.catch(() => undefined));
  c.set("actor", found.actor);
  if (found.recent && !isPlainRead(c)) {
    const { keyId, agentId, role } = found.actor;
    c.set("credentialGuard", { kind: "agent", keyId, agentId, role });
  }
}

/**
 * Who the request's credential proves now, asked of the Keyring again (an upgrade never takes an
 * isolate's recent answer): an opened live socket is confirmed with it (auth/live-sockets.ts). An
 * agent's owner carries its company, which its key fixes.
 */
export async function currentOwner(c: Context<AppEnv>): Promise<(LiveOwner & { companyId?: string }) | null> {
  const bearer = c.req.header(API_KEY_HEADER) === undefined ? bearerToken(c) : undefined;
  if (bearer !== undefined && apiFamilyOf(c.req.path) === "control") {
    const found = await actorFromAgentKey(c.env, database(c.env.DB), bearer, { forRead: isPlainRead(c) });
    return found ? { kind: "agent", id: found.actor.agentId, companyId: found.actor.companyId } : null;
  }
  const principal = await resolvePrincipal(c);
  return principal ? { kind: "user", id: principal.user.id } : null;
}

/** When the request's scoped key expires (a socket it opens closes then), or null. */
export const keyExpiryOf = (c: Context<AppEnv>): number | null => {
  const principal = c.get("principal") as Principal | undefined;
  return principal ? (grantOfPrincipal(principal)?.expiresAt ?? null) : null;
};

export const requireAuthentication: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (isPublicRoute(c.req.method, c.req.path)) return next();
  const bearer = c.req.header(API_KEY_HEADER) === undefined ? bearerToken(c) : undefined;
  if (bearer !== undefined && apiFamilyOf(c.req.path) === "control") {
    await authenticateAgent(c, bearer);
    return next();
  }
  const principal = await resolvePrincipal(c);
  if (!principal) throw unauthorized();
  await admitBoardCaller(c, principal);
  return next();
};

/** Checks what a user's credential may do here and sets the request's principal and board actor. */
async function admitBoardCaller(c: Context<AppEnv>, principal: Principal): Promise<void> {
  const grant = grantOfPrincipal(principal);
  const refusal = keyRefusal(grant, c.req.method, c.req.path);
  if (refusal) throw refusal;
  if (principal.via === "cookie" && !SAFE_METHODS.has(c.req.method)) {
    const valid = await isValidCsrfToken(principal.webSession.token, c.req.header(CSRF_HEADER));
    if (!valid)
      throw forbidden(
        `Missing or invalid CSRF token: send the token from GET /api/auth/csrf in ${CSRF_HEADER}`,
      );
  }
  c.set("principal", principal);
  c.set("actor", {
    type: "board",
    userId: principal.user.id,
    user: principal.user,
    mutating: !SAFE_METHODS.has(c.req.method),
    ...(grant?.companyId ? { onlyCompanyId: grant.companyId } : {}),
  });
}

/**
 * The caller as the Keyring answers now, replacing what the isolate's recent answer said (and the
 * request's guard): 401 when the key no longer works. A membership the viewer gate confirmed in D1
 * earlier in this request still holds; one it took from the isolate's memory does not.
 */
export async function confirmCaller(c: Context<AppEnv>): Promise<Actor> {
  const guard = c.get("credentialGuard");
  c.set("credentialGuard", undefined);
  // A membership taken from the isolate's memory (the guard's memberOf) is read from D1 again.
  const before = guard?.kind === "user" && guard.memberOf ? undefined : c.get("actor");
  const bearer = c.req.header(API_KEY_HEADER) === undefined ? bearerToken(c) : undefined;
  if (bearer !== undefined) {
    const found = await actorFromAgentKey(c.env, database(c.env.DB), bearer, { forRead: false });
    if (!found) throw unauthorized("Missing, invalid or revoked agent key");
    c.set("actor", found.actor);
    return found.actor;
  }
  const presented = c.req.header(API_KEY_HEADER)?.trim() ?? "";
  const found = await principalFromApiKey(c.env, database(c.env.DB), presented, { forRead: false });
  if (!found) throw unauthorized();
  await admitBoardCaller(c, found.principal);
  const confirmed = c.get("actor");
  if (before?.type === "board" && confirmed.type === "board" && before.confirmedMemberOf)
    c.set("actor", { ...confirmed, confirmedMemberOf: before.confirmedMemberOf });
  return c.get("actor");
}

/**
 * Runs a guarded write (GUARDED_WRITES) with the request's guard, if it has one; when its commit
 * could not be made on the recent answer (CredentialUnconfirmed: nothing was committed), asks the
 * Keyring and runs it once more without a guard. `run` reads the actor from the context each time.
 */
export async function withCredentialGuard<T>(
  c: Context<AppEnv>,
  run: (guard: CredentialGuard | null) => Promise<T>,
): Promise<T> {
  const guard = c.get("credentialGuard") ?? null;
  if (guard === null) return run(null);
  try {
    return await run(guard);
  } catch (error) {
    if (!(error instanceof CredentialUnconfirmed)) throw error;
    await confirmCaller(c);
    return run(null);
  }
}

export function requireRole(...roles: Role[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!roles.includes(c.get("principal").user.role)) {
      throw forbidden(`This operation requires the role ${roles.join(" or ")}`);
    }
    return next();
  };
}
