import { inArray, isNull, or } from "drizzle-orm";
import { grantOfPrincipal, type Principal } from "../../core/principal";
import type { Db } from "../../db/client";
import { type SessionRow, type WebhookRow, webhooks } from "../../db/schema";

/**
 * A global webhook receives every session of its owner, so only the owner (or a SUPERADMIN) may see
 * or change it through one of those sessions; a user the session is shared with manages only the
 * session's own webhooks. Nor does a key limited to one session: a global webhook reaches the others.
 */
export const managesGlobal = (caller: Principal, session: SessionRow): boolean =>
  (caller.user.role === "SUPERADMIN" || caller.user.id === session.userId) &&
  grantOfPrincipal(caller)?.sessionId == null;

/** The Session resource's `webhooks`: a summary, as GET /sessions shows it (never the secret). */
export interface WebhookSummary {
  id: string;
  name: string;
  url: string;
  events: string[];
  isActive: boolean;
}

const summaryOf = (row: WebhookRow): WebhookSummary => ({
  id: row.id,
  name: row.name,
  url: row.url,
  events: row.events,
  isActive: row.isActive,
});

/**
 * The webhooks each listed session shows: its own, plus its owner's global ones when the caller may
 * manage them (managesGlobal). One D1 query for the whole listing.
 */
export async function webhookSummaries(
  db: Db,
  caller: Principal,
  listed: readonly SessionRow[],
): Promise<Map<string, WebhookSummary[]>> {
  const { user } = caller;
  const result = new Map<string, WebhookSummary[]>(listed.map((session) => [session.id, []]));
  if (listed.length === 0) return result;
  const owners = [...new Set(listed.map((session) => session.userId))];
  const rows = await db
    .select()
    .from(webhooks)
    .where(
      user.role === "SUPERADMIN"
        ? undefined
        : or(isNull(webhooks.sessionId), inArray(webhooks.userId, owners)),
    );
  for (const session of listed) {
    const shown = rows.filter((row) =>
      row.sessionId === null
        ? row.userId === session.userId && managesGlobal(caller, session)
        : row.sessionId === session.id,
    );
    result.set(session.id, shown.map(summaryOf));
  }
  return result;
}
