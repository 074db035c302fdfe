import { CREDENTIALS_CHANGED, cutLiveSockets } from "../auth/live-sockets";
import { findUserById, toPublicUser } from "../auth/user-store";
import type { Env } from "../core/env";
import type { Principal } from "../core/principal";
import type { KeyGrant } from "../core/scopes";
import { database } from "../db/client";
import { authorizationServer, oauthApi, RESOURCE_PATH } from "./server";

/** What a grant carries (props and metadata alike): the scoped-key grant the user chose, and who asked. */
export interface GrantRecord {
  grant: KeyGrant;
  clientName: string;
}

/** A connected app as the API key page lists it. */
export interface ConnectedApp {
  grantId: string;
  clientId: string;
  clientName: string;
  grant: KeyGrant;
  createdAt: number;
  lastUsedAt: number | null;
}

/**
 * The library's tokens are `userId:grantId:secret`; no key of ours has a colon (`sk_…`, `swa_…`,
 * hex). Only the shape: whether it is valid is the library's answer.
 */
export const looksLikeOAuthToken = (token: string): boolean => token.split(":").length === 3;

const grantIdOf = (token: string): string => token.split(":")[1] ?? "";

/** "Last used", kept next to the library's records under a prefix of ours, at most once a minute. */
const LAST_USED_PREFIX = "switchboard:last-used:";
const LAST_USED_EVERY_MS = 60_000;
const LAST_USED_TTL_S = 31 * 24 * 60 * 60;
const lastNoted = new Map<string, number>();

async function noteUse(env: Env, grantId: string, now = Date.now()): Promise<void> {
  if (now - (lastNoted.get(grantId) ?? 0) < LAST_USED_EVERY_MS) return;
  lastNoted.set(grantId, now);
  await env.OAUTH_KV.put(`${LAST_USED_PREFIX}${grantId}`, String(now), { expirationTtl: LAST_USED_TTL_S });
}

/**
 * Who an OAuth access token proves, or null (unknown, expired, revoked, for another resource, or its
 * user is gone). Asked of the library's store on every request, never cached: a revocation answers
 * 401 on the very next one. The principal looks like a scoped key's (the grant the user chose), so
 * REST authorizes it by the same rules (auth/key-scopes.ts, keyCompanyGate).
 */
export async function principalFromOAuthToken(
  env: Env,
  origin: string,
  token: string,
): Promise<Principal | null> {
  const server = authorizationServer(origin);
  if (server === null) return null;
  const valid = await server.validateToken<GrantRecord>(`${origin}${RESOURCE_PATH}`, token, env);
  if (valid === null) return null;
  const row = await findUserById(database(env.DB), valid.userId);
  if (row === undefined) return null;
  const grantId = grantIdOf(token);
  await noteUse(env, grantId);
  return { via: "api_key", user: toPublicUser(row), apiKeyId: `oauth:${grantId}`, grant: valid.props.grant };
}

/** The user's connected apps, newest first. */
export async function listConnectedApps(env: Env, origin: string, userId: string): Promise<ConnectedApp[]> {
  const api = oauthApi(env, origin);
  if (api === null) return [];
  const apps: ConnectedApp[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.listUserGrants(userId, cursor === undefined ? {} : { cursor });
    for (const summary of page.items) {
      const record = summary.metadata as GrantRecord;
      const lastUsed = await env.OAUTH_KV.get(`${LAST_USED_PREFIX}${summary.id}`);
      apps.push({
        grantId: summary.id,
        clientId: summary.clientId,
        clientName: record.clientName,
        grant: record.grant,
        createdAt: summary.createdAt * 1000,
        lastUsedAt: lastUsed === null ? null : Number(lastUsed),
      });
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
  return apps.sort((a, b) => b.createdAt - a.createdAt);
}

/**
 * Ends a connected app's access: its tokens answer 401 from now on, and the user's open live streams
 * (an MCP GET stream the app holds among them) close, as when a key is revoked. False for a grant
 * that is not the user's.
 */
export async function revokeConnectedApp(
  env: Env,
  origin: string,
  userId: string,
  grantId: string,
): Promise<boolean> {
  const apps = await listConnectedApps(env, origin, userId);
  if (!apps.some((app) => app.grantId === grantId)) return false;
  await oauthApi(env, origin)?.revokeGrant(grantId, userId);
  await env.OAUTH_KV.delete(`${LAST_USED_PREFIX}${grantId}`);
  await cutLiveSockets(env, { kind: "user", id: userId }, CREDENTIALS_CHANGED);
  return true;
}
