import { and, asc, eq, inArray, isNull, or } from "drizzle-orm";
import type { WebhookEndpoint } from "../../../durable-objects/messaging/webhooks/types";
import { sessionObject } from "../../../durable-objects/session/contract";
import type { Env } from "../../core/env";
import { type Db, database } from "../../db/client";
import { type SessionRow, sessions, type WebhookRow, webhooks } from "../../db/schema";

/**
 * The endpoints a session delivers to, and the copies its SessionDO keeps of them. D1 is the source
 * of truth; every change is followed by a push of the whole list to each session it concerns, so a
 * lost or reordered push is repaired by the next one.
 */

/** The session's own webhooks, and (with `includeGlobal`) its owner's global ones. */
export const concerning = (session: Pick<SessionRow, "id" | "userId">, includeGlobal: boolean) =>
  includeGlobal
    ? or(
        eq(webhooks.sessionId, session.id),
        and(isNull(webhooks.sessionId), eq(webhooks.userId, session.userId)),
      )
    : eq(webhooks.sessionId, session.id);

const toEndpoint = (row: WebhookRow): WebhookEndpoint => ({
  id: row.id,
  url: row.url,
  secret: row.secret,
  secretSealed: row.secretSealed,
  events: row.events,
  isActive: row.isActive,
});

/** Every endpoint the session delivers to: its own webhooks and its owner's global ones. */
export async function endpointsOf(db: Db, sessionInternalId: string): Promise<WebhookEndpoint[] | null> {
  const session = await db.query.sessions.findFirst({
    where: eq(sessions.id, sessionInternalId),
    columns: { id: true, userId: true },
  });
  if (!session) return null;
  const rows = await db
    .select()
    .from(webhooks)
    .where(concerning(session, true))
    .orderBy(asc(webhooks.createdAt), asc(webhooks.id));
  return rows.map(toEndpoint);
}

/** Sends the session's current endpoint list to its Durable Object (a deleted session has none to get). */
export async function pushWebhooks(env: Env, sessionInternalId: string): Promise<void> {
  const endpoints = await endpointsOf(database(env.DB), sessionInternalId);
  if (endpoints === null) return;
  await sessionObject(env, sessionInternalId).setWebhooks(sessionInternalId, endpoints);
}

/** A global webhook changed: every session of its owner gets its new list (one D1 read for all). */
export async function pushOwnerWebhooks(env: Env, userId: string): Promise<void> {
  const db = database(env.DB);
  const ownedIds = () => db.select({ id: sessions.id }).from(sessions).where(eq(sessions.userId, userId));
  const [owned, rows] = await Promise.all([
    ownedIds(),
    db
      .select()
      .from(webhooks)
      .where(
        or(
          and(isNull(webhooks.sessionId), eq(webhooks.userId, userId)),
          inArray(webhooks.sessionId, ownedIds()),
        ),
      )
      .orderBy(asc(webhooks.createdAt), asc(webhooks.id)),
  ]);
  await Promise.all(
    owned.map(({ id }) => {
      const endpoints = rows.filter((row) => row.sessionId === id || row.sessionId === null).map(toEndpoint);
      return sessionObject(env, id).setWebhooks(id, endpoints);
    }),
  );
}

/** Pushes to whoever the webhook concerns: its session, or all of its owner's. */
export function pushAfterChange(env: Env, row: Pick<WebhookRow, "sessionId" | "userId">): Promise<void> {
  return row.sessionId === null ? pushOwnerWebhooks(env, row.userId) : pushWebhooks(env, row.sessionId);
}
