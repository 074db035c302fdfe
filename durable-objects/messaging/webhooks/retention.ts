import { getState, setState } from "./store";

/**
 * Keeps the outbox and the deliveries log bounded: finished deliveries and outbox entries no delivery
 * refers to go after a week. It rides on work that happens anyway (the delivery alarm, emitting an
 * event), at most hourly per object and in batches, so it never needs an alarm of its own and never
 * holds the object for long.
 */
export const RETENTION_MS = 7 * 24 * 3_600_000;
export const PRUNE_EVERY_MS = 3_600_000;
const BATCH = 500;

/** Deletes one batch of each; true when a batch was full and more is probably waiting. */
export function prune(sql: SqlStorage, now: number): boolean {
  const cutoff = now - RETENTION_MS;
  const deliveries = sql
    .exec(
      `DELETE FROM webhook_deliveries WHERE n IN (
         SELECT n FROM webhook_deliveries WHERE created_at < ? AND status != 'pending' LIMIT ?) RETURNING n`,
      cutoff,
      BATCH,
    )
    .toArray().length;
  // Entries run in time order, so a young oldest entry means the expensive query has nothing to find.
  const oldest = sql
    .exec<{ created_at: number }>("SELECT created_at FROM outbox ORDER BY seq LIMIT 1")
    .toArray()[0];
  if (!oldest || oldest.created_at >= cutoff) return deliveries >= BATCH;
  // Only entries already fanned out, with no delivery left that could need them (redeliver), and
  // (for the events the company line's relay takes, line/relay.ts RELAYED_EVENTS) already handed to it.
  const deleted = sql
    .exec<{ seq: number }>(
      `DELETE FROM outbox WHERE seq IN (
         SELECT seq FROM outbox o WHERE seq <= ? AND created_at < ?
           AND (event NOT IN ('message.received', 'poll.vote')
             OR seq <= COALESCE((SELECT v FROM line_relay WHERE k = 'cursor'), seq))
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.outbox_seq = o.seq)
         ORDER BY seq LIMIT ?) RETURNING seq`,
      getState(sql, "fanned_out_seq") ?? 0,
      cutoff,
      BATCH,
    )
    .toArray();
  // The event log's horizon (events/log.ts): a reader after an older cursor gets 410.
  const through = Math.max(getState(sql, "pruned_through_seq") ?? 0, ...deleted.map((row) => row.seq));
  if (deleted.length > 0) setState(sql, "pruned_through_seq", through);
  const entries = deleted.length;
  return deliveries >= BATCH || entries >= BATCH;
}

/** When each object last pruned, and whether it left work behind (memory is enough: a restart prunes early). */
const lastPrune = new WeakMap<SqlStorage, { at: number; more: boolean }>();

export function pruneSoon(sql: SqlStorage, now: number): void {
  const last = lastPrune.get(sql);
  if (last && !last.more && now - last.at < PRUNE_EVERY_MS) return;
  lastPrune.set(sql, { at: now, more: prune(sql, now) });
}
