import { failure, type Outcome, type SessionContext, success } from "../context";

/**
 * The session's event log, read from a cursor. It is the webhook outbox itself (outbox.ts): every event
 * a webhook can carry is appended there in the same transaction as the change, and webhook deliveries
 * are fanned out from it, so the log, the stream and the webhooks cannot disagree. An entry's id is the
 * `webhook-id` its deliveries carry. docs/events.md has the contract.
 */

/** The tag of event-stream sockets (apart from the dashboard viewers' and the bridges'). */
export const EVENT_STREAM_TAG = "event-stream";
/** Most entries one page returns. */
export const MAX_EVENTS_PAGE = 1000;

/** One event as the log, the stream and (without `id` and `cursor`) the webhook body carry it. */
export interface LoggedEvent {
  id: string;
  cursor: string;
  event: string;
  sessionId: string;
  timestamp: string;
  data: unknown;
}

/**
 * The event's id: unique across sessions (the internal id names the session), so a receiver that
 * deduplicates on `webhook-id` across several sessions never drops one.
 */
export const eventIdOf = (sessionId: string, seq: number): string => `evt_${sessionId}_${seq}`;

type Row = { seq: number; event: string; data: string; created_at: number };

export function loggedEventOf(sessionId: string, slug: string, row: Row): LoggedEvent {
  return {
    id: eventIdOf(sessionId, row.seq),
    cursor: String(row.seq),
    event: row.event,
    sessionId: slug,
    timestamp: new Date(row.created_at).toISOString(),
    data: JSON.parse(row.data) as unknown,
  };
}

/**
 * The cursor below which entries were pruned: a reader after an older cursor would miss events.
 * Retention (webhooks/retention.ts) records it as it deletes.
 */
export function prunedThrough(sql: SqlStorage): number {
  const row = sql
    .exec<{ v: number }>("SELECT v FROM webhook_state WHERE k = 'pruned_through_seq'")
    .toArray()[0];
  return row?.v ?? 0;
}

/** Entries after `after`, oldest first (at most `limit`). */
export function readAfter(sql: SqlStorage, after: number, limit: number): Row[] {
  return sql
    .exec<Row>(
      "SELECT seq, event, data, created_at FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?",
      after,
      limit,
    )
    .toArray();
}

/** A cursor as the API takes it: "0" (the beginning) or an entry's cursor. */
export function parseCursor(cursor: string): number | null {
  return /^\d{1,15}$/.test(cursor) ? Number(cursor) : null;
}

export type EventsPage = { items: LoggedEvent[]; next: string };
/** The cursor is older than the retention: the Worker answers 410 with the oldest readable cursor. */
export type EventsGone = { gone: true; oldestCursor: string };

/** The oldest readable cursor when `after` is older than the retention, else null. */
export function pastRetention(sql: SqlStorage, after: number): EventsGone | null {
  const oldest = prunedThrough(sql);
  return after >= oldest ? null : { gone: true, oldestCursor: String(oldest) };
}

export const eventsApi = {
  "events.read": async (
    ctx: SessionContext,
    input: { after: string; limit: number },
  ): Promise<Outcome<EventsPage | EventsGone>> => {
    const after = parseCursor(input.after);
    if (after === null) return failure(400, "Invalid cursor");
    const gone = pastRetention(ctx.sql, after);
    if (gone) return success(gone);
    const { slug } = await ctx.config();
    const rows = readAfter(ctx.sql, after, Math.min(Math.max(input.limit, 1), MAX_EVENTS_PAGE));
    const items = rows.map((row) => loggedEventOf(ctx.sessionId, slug, row));
    return success({ items, next: items.at(-1)?.cursor ?? String(after) });
  },
};
