import { and, asc, eq, or, sql } from "drizzle-orm";
import { BOT_CONFIG_DEFAULTS } from "../../../durable-objects/messaging/config/bot";
import { randomBytes, toBase62 } from "../../auth/crypto";
import { normaliseEmail } from "../../auth/user-store";
import { grantOfPrincipal, type Principal } from "../../core/principal";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import {
  type BotConfigRow,
  botConfigs,
  type SessionRow,
  type ShareRole,
  sessionAccess,
  sessions,
} from "../../db/schema";
import { forbidden, notFound } from "../../http/errors";

export const FORBIDDEN_SESSION = "Forbidden - Cannot access this session";
export const SESSION_NOT_FOUND = "Session not found";

export interface SessionWithBot {
  session: SessionRow;
  botConfig: BotConfigRow | null;
}

/** `sess_` + 10 base62 characters: short enough for paths, random enough not to collide in practice. */
export const generateSlug = (): string => `sess_${toBase62(randomBytes(8)).slice(0, 10)}`;

/**
 * Session rows by id or slug, kept a few seconds per isolate so the send path does not wait on D1 for
 * every message. Only `id` and `userId` of a cached row decide anything (who may use it, which object
 * to call), and neither changes while the session exists; a delete drops it here at once and from other
 * isolates within the TTL (docs/decisions.md).
 */
const SESSION_CACHE_TTL_MS = 5_000;
const SESSION_CACHE_LIMIT = 10_000;
const sessionCache = new Map<string, { session: SessionRow; expires: number }>();

export function forgetSession(session: Pick<SessionRow, "id" | "sessionId">): void {
  sessionCache.delete(session.id);
  sessionCache.delete(session.sessionId);
}

/** A path's `{id}` may be the public sessionId or the internal id. */
export async function findSession(db: Db, idOrSlug: string): Promise<SessionRow | undefined> {
  const cached = sessionCache.get(idOrSlug);
  if (cached && cached.expires > Date.now()) return cached.session;
  const session = await db.query.sessions.findFirst({
    where: or(eq(sessions.sessionId, idOrSlug), eq(sessions.id, idOrSlug)),
  });
  if (!session) return undefined;
  if (sessionCache.size >= SESSION_CACHE_LIMIT) sessionCache.clear();
  const entry = { session, expires: Date.now() + SESSION_CACHE_TTL_MS };
  sessionCache.set(session.id, entry);
  sessionCache.set(session.sessionId, entry);
  return session;
}

/** What a user may do with a session: everything (owner, SUPERADMIN), a share's role, or nothing. */
export type SessionAccess = "owner" | ShareRole | null;
/** What a request needs: to read it, to operate it (send, manage webhooks…), or to own it. */
export type SessionNeed = "read" | "operate" | "own";

/**
 * A key limited to one session (core/scopes.ts) reaches no other: for it every other session is as
 * unknown as another tenant's. Checked here, where every session access is decided.
 */
export async function accessOf(db: Db, caller: Principal, session: SessionRow): Promise<SessionAccess> {
  const only = grantOfPrincipal(caller)?.sessionId;
  if (only != null && only !== session.id) return null;
  const { user } = caller;
  if (user.role === "SUPERADMIN" || session.userId === user.id) return "owner";
  const share = await db.query.sessionAccess.findFirst({
    where: and(eq(sessionAccess.sessionId, session.id), eq(sessionAccess.email, normaliseEmail(user.email))),
    columns: { role: true },
  });
  return share?.role ?? null;
}

const allows = (access: SessionAccess, need: SessionNeed): boolean =>
  access === "owner" || (access === "operator" && need !== "own") || (access === "viewer" && need === "read");

const REFUSALS: Record<SessionNeed, string> = {
  read: FORBIDDEN_SESSION,
  operate: "Forbidden - This session is shared with you to read only",
  own: "Forbidden - Only the session's owner or a SUPERADMIN may do this",
};

/**
 * Loads a session the caller may use as `need` says. 404 when it does not exist and, with the very
 * same answer, when the caller has no access to it at all: otherwise the difference would tell anyone
 * which session ids exist. 403 only for a caller the session is shared with whose role does not allow
 * this request (a viewer writing, an operator sharing): they already know the session exists.
 */
export async function loadAccessibleSession(
  db: Db,
  caller: Principal,
  idOrSlug: string,
  need: SessionNeed,
): Promise<SessionRow> {
  const session = await findSession(db, idOrSlug);
  if (!session) throw notFound(SESSION_NOT_FOUND);
  const access = await accessOf(db, caller, session);
  if (access === null) throw notFound(SESSION_NOT_FOUND);
  if (!allows(access, need)) throw forbidden(REFUSALS[need], FORBIDDEN_SESSION);
  return session;
}

/** The sessions the caller may use; for a key limited to one session, that one only. */
export async function listAccessibleSessions(db: Db, caller: Principal): Promise<SessionWithBot[]> {
  const { user } = caller;
  const only = grantOfPrincipal(caller)?.sessionId;
  const shared =
    user.role === "SUPERADMIN"
      ? undefined
      : or(
          eq(sessions.userId, user.id),
          sql`${sessions.id} IN (SELECT ${sessionAccess.sessionId} FROM ${sessionAccess} WHERE ${sessionAccess.email} = ${normaliseEmail(user.email)})`,
        );
  const rows = await db
    .select({ session: sessions, botConfig: botConfigs })
    .from(sessions)
    .leftJoin(botConfigs, eq(botConfigs.sessionId, sessions.id))
    .where(and(shared, only == null ? undefined : eq(sessions.id, only)))
    .orderBy(asc(sessions.createdAt), asc(sessions.sessionId));
  return rows;
}

/**
 * A new session and its default bot configuration, stored together (as the reference does), so the
 * configuration every answer shows is complete from the start: real id and times, every field set.
 */
export async function insertSession(
  db: Db,
  input: { name: string; sessionId: string; userId: string },
): Promise<SessionWithBot & { botConfig: BotConfigRow }> {
  const now = Date.now();
  const row: SessionRow = {
    id: newId(),
    sessionId: input.sessionId,
    name: input.name,
    userId: input.userId,
    status: "Disconnected",
    state: "stopped",
    me: null,
    config: "{}",
    createdAt: now,
    updatedAt: now,
  };
  const botConfig: BotConfigRow = {
    ...BOT_CONFIG_DEFAULTS,
    botAllowedJids: [],
    botBlockedJids: [],
    autoReplyAllowedJids: [],
    autoReplyBlockedJids: [],
    id: newId(),
    sessionId: row.id,
    createdAt: now,
    updatedAt: now,
  };
  await db.batch([db.insert(sessions).values(row), db.insert(botConfigs).values(botConfig)]);
  return { session: row, botConfig };
}

export async function findBotConfig(db: Db, sessionId: string): Promise<BotConfigRow | undefined> {
  return db.query.botConfigs.findFirst({ where: eq(botConfigs.sessionId, sessionId) });
}
