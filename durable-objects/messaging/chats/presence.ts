import type { SessionContext } from "../context";

/**
 * Contacts whose presence the session follows (`POST /chat/{sid}/{jid}/presence/subscribe`). WhatsApp
 * keeps a presence subscription only as long as the connection that made it, so the session remembers
 * them and subscribes again each time it connects.
 */
export const PRESENCE_SCHEMA: readonly string[] = [
  "CREATE TABLE IF NOT EXISTS presence_subscriptions (jid TEXT PRIMARY KEY, since INTEGER NOT NULL)",
];

/** Each one is a stanza on every connect: enough for a desk's contacts, not a way to watch a crowd. */
export const MAX_PRESENCE_SUBSCRIPTIONS = 500;

/** Whether `jid` can be followed: already followed, or there is room. */
export function hasRoomFor(sql: SqlStorage, jid: string): boolean {
  const known = sql.exec("SELECT 1 FROM presence_subscriptions WHERE jid = ?", jid).toArray().length > 0;
  if (known) return true;
  const [row] = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM presence_subscriptions").toArray();
  return (row?.n ?? 0) < MAX_PRESENCE_SUBSCRIPTIONS;
}

export function rememberSubscription(sql: SqlStorage, jid: string, now: number): void {
  sql.exec("INSERT OR IGNORE INTO presence_subscriptions (jid, since) VALUES (?, ?)", jid, now);
}

/** After a (re)connect: WhatsApp forgot the subscriptions of the previous connection. */
export async function subscribeAgain(ctx: SessionContext): Promise<void> {
  const jids = ctx.sql
    .exec<{ jid: string }>("SELECT jid FROM presence_subscriptions ORDER BY since")
    .toArray()
    .map((row) => row.jid);
  for (const jid of jids) {
    const outcome = await ctx.wa({ op: "presence.subscribe", jid });
    if (!outcome.ok) throw new Error(`presence.subscribe ${jid}: ${outcome.status} ${outcome.error}`);
  }
}
