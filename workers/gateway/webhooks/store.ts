import { and, asc, eq } from "drizzle-orm";
import { type Db, iso } from "../../db/client";
import { type SessionRow, type WebhookRow, webhooks } from "../../db/schema";
import { concerning } from "../sessions";

/**
 * The webhook directory in D1 and the copies the SessionDOs keep of it. D1 is the source of truth;
 * every change is followed by a push of the whole endpoint list to each session it concerns, so a
 * lost or reordered push is repaired by the next one.
 */

/** A webhook as the API shows it: never the secret. */
export interface WebhookResource {
  id: string;
  name: string;
  url: string;
  /** The session's public id, or null for one of the owner's global webhooks. */
  sessionId: string | null;
  events: string[];
  isActive: boolean;
  disabledReason: string | null;
  secretSet: boolean;
  createdAt: string;
  updatedAt: string;
}

export function toWebhookResource(row: WebhookRow, session: Pick<SessionRow, "sessionId">): WebhookResource {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    sessionId: row.sessionId === null ? null : session.sessionId,
    events: row.events,
    isActive: row.isActive,
    disabledReason: row.disabledReason,
    secretSet: row.secret.length > 0,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

export function listWebhooks(db: Db, session: SessionRow, includeGlobal: boolean): Promise<WebhookRow[]> {
  return db
    .select()
    .from(webhooks)
    .where(concerning(session, includeGlobal))
    .orderBy(asc(webhooks.createdAt), asc(webhooks.id));
}

/** The webhook, if it concerns this session; anything else (another user's, another session's) is absent. */
export async function findWebhook(
  db: Db,
  session: SessionRow,
  webhookId: string,
  includeGlobal: boolean,
): Promise<WebhookRow | undefined> {
  const [row] = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, webhookId), concerning(session, includeGlobal)))
    .limit(1);
  return row;
}
