import { and, eq, gt } from "drizzle-orm";
import type { Env } from "../core/env";
import type { Principal } from "../core/principal";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { users, webSessions } from "../db/schema";
import { keyringTagFor } from "./api-key-format";
import { credentialsChanged } from "./api-key-store";
import { hmacSha256, randomToken, sha256Hex, timingSafeEqual, toBase64Url } from "./crypto";
import { keyringShard } from "./keyring";
import { toPublicUser } from "./user-store";

export const SESSION_COOKIE = "web-auth.session-token";
export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export interface IssuedSession {
  token: string;
  expiresAt: number;
}

/**
 * `<tag>.<43 base64url chars>`: the tag names the Keyring shard of the user (as in their API key), so
 * a signed-in request is authenticated from that shard's memory and every change to the user (sign
 * out, password, role, deletion) invalidates exactly that shard. Tokens without a tag (issued before
 * the cache existed) are still accepted, from D1.
 */
const TAGGED_TOKEN = /^([0-9A-Za-z]{2})\.[\w-]{43}$/;

export async function createWebSession(db: Db, userId: string): Promise<IssuedSession> {
  const token = `${await keyringTagFor(userId)}.${randomToken(32)}`;
  const now = Date.now();
  const expiresAt = now + SESSION_TTL_MS;
  await db
    .insert(webSessions)
    .values({ id: newId(), tokenHash: await sha256Hex(token), userId, expiresAt, createdAt: now });
  return { token, expiresAt };
}

/** Resolves a cookie token to its user through its Keyring shard; expired sessions do not count. */
export async function principalFromSessionToken(env: Env, db: Db, token: string): Promise<Principal | null> {
  const tag = token.match(TAGGED_TOKEN)?.[1];
  if (!tag) return principalFromUntaggedToken(db, token);
  const found = await keyringShard(env, tag).resolveWebSession(await sha256Hex(token));
  if (!found || found.expiresAt <= Date.now()) return null;
  return {
    via: "cookie",
    user: found.user,
    webSession: { id: found.sessionId, token, expiresAt: found.expiresAt },
  };
}

/** A token from before sessions were tagged: one indexed D1 query. */
async function principalFromUntaggedToken(db: Db, token: string): Promise<Principal | null> {
  const [row] = await db
    .select({ sessionId: webSessions.id, expiresAt: webSessions.expiresAt, user: users })
    .from(webSessions)
    .innerJoin(users, eq(users.id, webSessions.userId))
    .where(and(eq(webSessions.tokenHash, await sha256Hex(token)), gt(webSessions.expiresAt, Date.now())))
    .limit(1);
  if (!row) return null;
  return {
    via: "cookie",
    user: toPublicUser(row.user),
    webSession: { id: row.sessionId, token, expiresAt: row.expiresAt },
  };
}

/** Signs one session out; the user's Keyring shard forgets their cached sessions after the delete. */
export async function deleteWebSession(env: Env, db: Db, sessionId: string, userId: string): Promise<void> {
  await db.delete(webSessions).where(eq(webSessions.id, sessionId));
  await credentialsChanged(env, userId);
}

/**
 * The CSRF token is derived from the session token (HMAC), so it needs no storage, changes with
 * every login and is useless without the HttpOnly cookie it is bound to.
 */
export async function csrfTokenFor(sessionToken: string): Promise<string> {
  return toBase64Url(await hmacSha256(sessionToken, "switchboard-csrf-v1"));
}

export async function isValidCsrfToken(
  sessionToken: string,
  candidate: string | undefined,
): Promise<boolean> {
  if (!candidate) return false;
  return timingSafeEqual(await csrfTokenFor(sessionToken), candidate);
}
