import { and, eq, gt } from "drizzle-orm";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { users, webSessions } from "../db/schema";
import { hmacSha256, randomToken, sha256Hex, timingSafeEqual, toBase64Url } from "./crypto";
import type { Principal } from "./principal";
import { toPublicUser } from "./user-store";

export const SESSION_COOKIE = "web-auth.session-token";
export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export interface IssuedSession {
  token: string;
  expiresAt: number;
}

export async function createWebSession(db: Db, userId: string): Promise<IssuedSession> {
  const token = randomToken(32);
  const now = Date.now();
  const expiresAt = now + SESSION_TTL_MS;
  await db
    .insert(webSessions)
    .values({ id: newId(), tokenHash: await sha256Hex(token), userId, expiresAt, createdAt: now });
  return { token, expiresAt };
}

/** Resolves a cookie token to its user, in one indexed query; expired sessions do not count. */
export async function principalFromSessionToken(db: Db, token: string): Promise<Principal | null> {
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

export async function deleteWebSession(db: Db, sessionId: string): Promise<void> {
  await db.delete(webSessions).where(eq(webSessions.id, sessionId));
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
