import { createdByOneOf } from "../access";
import type { AddedColumn } from "../schema";

/**
 * Broadcast jobs in the SessionDO's SQLite: one row per broadcast, one per recipient. The counters on
 * the job row are recomputed from the recipients after every step, so they can never drift.
 */

export const BROADCAST_TABLES = [
  // `lease_until`: a step is sending until then; a crashed step's lease simply runs out.
  // `waiting_since`: when the job started waiting for the session to come back (paces the polling).
  `CREATE TABLE IF NOT EXISTS broadcasts (
     id TEXT PRIMARY KEY, message TEXT NOT NULL, total INTEGER NOT NULL,
     sent INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL,
     created_at INTEGER NOT NULL, finished_at INTEGER, next_at INTEGER NOT NULL,
     lease_until INTEGER, waiting_since INTEGER)`,
  "CREATE INDEX IF NOT EXISTS broadcasts_by_status ON broadcasts (status, created_at)",
  `CREATE TABLE IF NOT EXISTS broadcast_recipients (
     broadcast_id TEXT NOT NULL, idx INTEGER NOT NULL, jid TEXT NOT NULL, status TEXT NOT NULL,
     message_id TEXT NOT NULL, error TEXT, attempts INTEGER NOT NULL DEFAULT 0, sent_at INTEGER,
     PRIMARY KEY (broadcast_id, idx))`,
  "CREATE INDEX IF NOT EXISTS broadcast_recipients_by_status ON broadcast_recipients (broadcast_id, status, idx)",
] as const;

/**
 * `created_by`: the user on whose access the job sends (NULL on jobs from before it was recorded);
 * `cancel_reason`: why the service cancelled it (its creator's access ended);
 * `delay_ms`: the deprecated endpoint's `delay`, waited on top of the random gap (0 otherwise).
 */
export const BROADCAST_ADDED_COLUMNS: readonly AddedColumn[] = [
  { table: "broadcasts", column: "created_by", definition: "TEXT" },
  { table: "broadcasts", column: "cancel_reason", definition: "TEXT" },
  { table: "broadcasts", column: "delay_ms", definition: "INTEGER NOT NULL DEFAULT 0" },
];

export type BroadcastStatus = "running" | "completed" | "cancelled";
export type RecipientStatus = "pending" | "sent" | "failed" | "cancelled";

export type BroadcastRow = {
  id: string;
  message: string;
  total: number;
  sent: number;
  failed: number;
  status: BroadcastStatus;
  created_at: number;
  finished_at: number | null;
  next_at: number;
  lease_until: number | null;
  waiting_since: number | null;
  created_by: string | null;
  cancel_reason: string | null;
  delay_ms: number;
};

export type RecipientRow = {
  broadcast_id: string;
  idx: number;
  jid: string;
  status: RecipientStatus;
  message_id: string;
  error: string | null;
  attempts: number;
  sent_at: number | null;
};

/** Finished broadcasts kept for history; older ones are dropped when a new one starts. */
export const HISTORY_KEPT = 200;

export function insertBroadcast(
  sql: SqlStorage,
  job: {
    id: string;
    message: string;
    recipients: { jid: string; messageId: string }[];
    createdBy: string;
    delayMs: number;
    nextAt: number;
    now: number;
  },
): void {
  sql.exec(
    `INSERT INTO broadcasts (id, message, total, status, created_by, delay_ms, created_at, next_at)
     VALUES (?, ?, ?, 'running', ?, ?, ?, ?)`,
    job.id,
    job.message,
    job.recipients.length,
    job.createdBy,
    job.delayMs,
    job.now,
    job.nextAt,
  );
  job.recipients.forEach(({ jid, messageId }, idx) => {
    sql.exec(
      "INSERT INTO broadcast_recipients (broadcast_id, idx, jid, status, message_id) VALUES (?, ?, ?, 'pending', ?)",
      job.id,
      idx,
      jid,
      messageId,
    );
  });
}

export function pruneHistory(sql: SqlStorage): void {
  const stale = sql
    .exec<{ id: string }>(
      `SELECT id FROM broadcasts WHERE status != 'running' ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?`,
      HISTORY_KEPT,
    )
    .toArray();
  for (const { id } of stale) {
    sql.exec("DELETE FROM broadcast_recipients WHERE broadcast_id = ?", id);
    sql.exec("DELETE FROM broadcasts WHERE id = ?", id);
  }
}

export function findBroadcast(sql: SqlStorage, id: string): BroadcastRow | null {
  return sql.exec<BroadcastRow>("SELECT * FROM broadcasts WHERE id = ?", id).toArray()[0] ?? null;
}

/**
 * The job whose turn it is. Running broadcasts of a session go one after another, oldest first, so
 * the gap holds across all of them (two at once would halve it).
 */
export function activeBroadcast(sql: SqlStorage): BroadcastRow | null {
  return (
    sql
      .exec<BroadcastRow>(
        "SELECT * FROM broadcasts WHERE status = 'running' ORDER BY created_at, rowid LIMIT 1",
      )
      .toArray()[0] ?? null
  );
}

export function listBroadcasts(
  sql: SqlStorage,
  limit: number,
  offset: number,
): { rows: BroadcastRow[]; total: number } {
  const total = sql.exec<{ n: number }>("SELECT count(*) AS n FROM broadcasts").one().n;
  const rows = sql
    .exec<BroadcastRow>(
      "SELECT * FROM broadcasts ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?",
      limit,
      offset,
    )
    .toArray();
  return { rows, total };
}

export function recipientsOf(sql: SqlStorage, broadcastId: string): RecipientRow[] {
  return sql
    .exec<RecipientRow>("SELECT * FROM broadcast_recipients WHERE broadcast_id = ? ORDER BY idx", broadcastId)
    .toArray();
}

export function nextPending(sql: SqlStorage, broadcastId: string): RecipientRow | null {
  return (
    sql
      .exec<RecipientRow>(
        "SELECT * FROM broadcast_recipients WHERE broadcast_id = ? AND status = 'pending' ORDER BY idx LIMIT 1",
        broadcastId,
      )
      .toArray()[0] ?? null
  );
}

export function pendingCount(sql: SqlStorage, broadcastId: string): number {
  return sql
    .exec<{ n: number }>(
      "SELECT count(*) AS n FROM broadcast_recipients WHERE broadcast_id = ? AND status = 'pending'",
      broadcastId,
    )
    .one().n;
}

export function patchBroadcast(
  sql: SqlStorage,
  id: string,
  patch: Partial<Pick<BroadcastRow, "status" | "finished_at" | "next_at" | "lease_until" | "waiting_since">>,
): void {
  const entries = Object.entries(patch);
  if (entries.length === 0) return;
  sql.exec(
    `UPDATE broadcasts SET ${entries.map(([column]) => `${column} = ?`).join(", ")} WHERE id = ?`,
    ...entries.map(([, value]) => value as number | string | null),
    id,
  );
}

export function patchRecipient(
  sql: SqlStorage,
  recipient: Pick<RecipientRow, "broadcast_id" | "idx">,
  patch: Pick<RecipientRow, "status" | "error" | "attempts" | "sent_at">,
): void {
  sql.exec(
    "UPDATE broadcast_recipients SET status = ?, error = ?, attempts = ?, sent_at = ? WHERE broadcast_id = ? AND idx = ?",
    patch.status,
    patch.error,
    patch.attempts,
    patch.sent_at,
    recipient.broadcast_id,
    recipient.idx,
  );
}

/** Brings the job's `sent` and `failed` counters in line with its recipients. */
export function recount(sql: SqlStorage, broadcastId: string): void {
  sql.exec(
    `UPDATE broadcasts SET
       sent = (SELECT count(*) FROM broadcast_recipients WHERE broadcast_id = ?1 AND status = 'sent'),
       failed = (SELECT count(*) FROM broadcast_recipients WHERE broadcast_id = ?1 AND status = 'failed')
     WHERE id = ?1`,
    broadcastId,
  );
}

/** Stops a job: recipients not yet sent are marked `cancelled` and will never be sent. */
export function cancelBroadcast(
  sql: SqlStorage,
  id: string,
  now: number,
  reason: string | null = null,
): void {
  sql.exec("UPDATE broadcasts SET cancel_reason = ? WHERE id = ?", reason, id);
  sql.exec(
    "UPDATE broadcast_recipients SET status = 'cancelled' WHERE broadcast_id = ? AND status = 'pending'",
    id,
  );
  sql.exec(
    "UPDATE broadcasts SET status = 'cancelled', finished_at = ?, waiting_since = NULL WHERE id = ?",
    now,
    id,
  );
  recount(sql, id);
}

/** Cancels every running job sending on these users' access (theirs ended); returns how many. */
export function cancelBroadcastsBy(
  sql: SqlStorage,
  userIds: readonly string[],
  reason: string,
  now: number,
): number {
  if (userIds.length === 0) return 0;
  const running = sql
    .exec<{ id: string }>(
      `SELECT id FROM broadcasts WHERE status = 'running' AND ${createdByOneOf(userIds)}`,
      ...userIds,
    )
    .toArray();
  for (const { id } of running) cancelBroadcast(sql, id, now, reason);
  return running.length;
}

/** Gives up on every recipient not yet sent, with the reason. */
export function failPending(sql: SqlStorage, id: string, reason: string): void {
  sql.exec(
    "UPDATE broadcast_recipients SET status = 'failed', error = ? WHERE broadcast_id = ? AND status = 'pending'",
    reason,
    id,
  );
  recount(sql, id);
}
