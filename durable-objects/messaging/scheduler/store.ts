import { createdByOneOf } from "../access";
import type { AddedColumn } from "../schema";
import type { MediaKind, ResolvedSchedule, ScheduleFields } from "./content";

/**
 * Scheduled messages in the SessionDO's SQLite. `send_at` is the occurrence being sent (it fixes the
 * message id); `next_at` is when the next attempt at it is due, later than `send_at` after retries.
 * A recurring row stays PENDING and moves to its next tick; each occurrence it sends (or gives up
 * on) is copied into its own SENT or FAILED row with `parent_id`, so history shows every run.
 */
export const SCHEDULER_TABLES = [
  `CREATE TABLE IF NOT EXISTS scheduled (
     id TEXT PRIMARY KEY, jid TEXT NOT NULL, content TEXT, media_url TEXT, media_type TEXT, file_name TEXT,
     send_at INTEGER NOT NULL, timezone TEXT NOT NULL, cron TEXT, status TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT, next_at INTEGER NOT NULL, lease_until INTEGER,
     sent_at INTEGER, message_id TEXT, parent_id TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
  "CREATE INDEX IF NOT EXISTS scheduled_due ON scheduled (status, next_at)",
  "CREATE INDEX IF NOT EXISTS scheduled_by_send_at ON scheduled (send_at)",
] as const;

/**
 * `created_by`: the user on whose access the message is sent (who created it, or last changed it);
 * NULL on rows from before it was recorded. A row whose creator lost operator access is CANCELLED
 * with the reason in `last_error` (scheduler.ts, messaging/access.ts).
 */
export const SCHEDULER_ADDED_COLUMNS: readonly AddedColumn[] = [
  { table: "scheduled", column: "created_by", definition: "TEXT" },
  // JSON LineAgentSend: an agent's message, sent under its daily cap and the line's pacing (agent-sends.ts).
  { table: "scheduled", column: "sent_for", definition: "TEXT" },
];

export type ScheduledStatus = "PENDING" | "SENT" | "FAILED" | "CANCELLED";

export type ScheduledRow = {
  id: string;
  jid: string;
  content: string | null;
  media_url: string | null;
  media_type: MediaKind | null;
  file_name: string | null;
  send_at: number;
  timezone: string;
  cron: string | null;
  status: ScheduledStatus;
  attempts: number;
  last_error: string | null;
  next_at: number;
  lease_until: number | null;
  sent_at: number | null;
  message_id: string | null;
  parent_id: string | null;
  created_by: string | null;
  sent_for: string | null;
  created_at: number;
  updated_at: number;
};

/** Finished rows kept for the history tab; older ones go when new ones finish. */
export const HISTORY_KEPT = 1000;

export interface ScheduledMessage {
  id: string;
  /** The session's public sessionId. */
  sessionId: string;
  jid: string;
  /** The text, or the media's caption. */
  content: string | null;
  mediaUrl: string | null;
  mediaType: MediaKind | null;
  fileName: string | null;
  sendAt: string;
  timezone: string;
  cronExpression: string | null;
  status: ScheduledStatus;
  attempts: number;
  lastError: string | null;
  /** When the next attempt is due (later than sendAt while retrying); null once finished. */
  nextAttemptAt: string | null;
  sentAt: string | null;
  messageId: string | null;
  /** For one run of a recurring message: the recurring message's id. */
  recurringId: string | null;
  /** The user on whose access it is sent (who created or last changed it); null on older rows. */
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function toScheduledMessage(row: ScheduledRow, slug: string): ScheduledMessage {
  return {
    id: row.id,
    sessionId: slug,
    jid: row.jid,
    content: row.content,
    mediaUrl: row.media_url,
    mediaType: row.media_type,
    fileName: row.file_name,
    sendAt: new Date(row.send_at).toISOString(),
    timezone: row.timezone,
    cronExpression: row.cron,
    status: row.status,
    attempts: row.attempts,
    lastError: row.last_error,
    nextAttemptAt: row.status === "PENDING" ? iso(Math.max(row.next_at, row.lease_until ?? 0)) : null,
    sentAt: iso(row.sent_at),
    messageId: row.message_id,
    recurringId: row.parent_id,
    createdBy: row.created_by,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

export const fieldsOf = (row: ScheduledRow): ScheduleFields => ({
  jid: row.jid,
  content: row.content,
  mediaUrl: row.media_url,
  mediaType: row.media_type,
  fileName: row.file_name,
  timezone: row.timezone,
  cronExpression: row.cron,
});

export function findScheduled(sql: SqlStorage, id: string): ScheduledRow | null {
  return sql.exec<ScheduledRow>("SELECT * FROM scheduled WHERE id = ?", id).toArray()[0] ?? null;
}

export function insertScheduled(
  sql: SqlStorage,
  id: string,
  schedule: ResolvedSchedule,
  created: { by: string; sentFor: string | null },
  now: number,
): void {
  sql.exec(
    `INSERT INTO scheduled (id, jid, content, media_url, media_type, file_name, send_at, timezone, cron,
       status, next_at, created_by, sent_for, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'PENDING', ?, ?, ?, ?, ?)`,
    id,
    schedule.jid,
    schedule.content,
    schedule.mediaUrl,
    schedule.mediaType,
    schedule.fileName,
    schedule.sendAt,
    schedule.timezone,
    schedule.cronExpression,
    schedule.sendAt,
    created.by,
    created.sentFor,
    now,
    now,
  );
}

/**
 * A new schedule for a pending row: its attempts start over, at the (possibly new) sendAt, and it is
 * now sent on the access of whoever changed it (a user: an agent's message becomes theirs, ungoverned).
 */
export function rescheduleRow(
  sql: SqlStorage,
  id: string,
  schedule: ResolvedSchedule,
  changedBy: string,
  now: number,
): void {
  sql.exec(
    `UPDATE scheduled SET jid = ?, content = ?, media_url = ?, media_type = ?, file_name = ?, send_at = ?,
       timezone = ?, cron = ?, attempts = 0, last_error = NULL, next_at = ?, message_id = NULL,
       created_by = ?, sent_for = NULL, updated_at = ?
     WHERE id = ?`,
    schedule.jid,
    schedule.content,
    schedule.mediaUrl,
    schedule.mediaType,
    schedule.fileName,
    schedule.sendAt,
    schedule.timezone,
    schedule.cronExpression,
    schedule.sendAt,
    changedBy,
    now,
    id,
  );
}

/**
 * Cancels every PENDING row sent on these users' access (theirs ended); returns how many. A row being
 * sent right now is cancelled too: its attempt finishes, but nothing after it is sent.
 */
export function cancelScheduledBy(
  sql: SqlStorage,
  userIds: readonly string[],
  reason: string,
  now: number,
): number {
  if (userIds.length === 0) return 0;
  return sql
    .exec(
      `UPDATE scheduled SET status = 'CANCELLED', last_error = ?, lease_until = NULL, updated_at = ?
       WHERE status = 'PENDING' AND ${createdByOneOf(userIds)} RETURNING id`,
      reason,
      now,
      ...userIds,
    )
    .toArray().length;
}

export function listScheduled(sql: SqlStorage, tab: "pending" | "history"): ScheduledRow[] {
  return tab === "pending"
    ? sql
        .exec<ScheduledRow>("SELECT * FROM scheduled WHERE status = 'PENDING' ORDER BY send_at, rowid")
        .toArray()
    : sql
        .exec<ScheduledRow>(
          "SELECT * FROM scheduled WHERE status != 'PENDING' ORDER BY COALESCE(sent_at, updated_at) DESC, rowid DESC LIMIT ?",
          HISTORY_KEPT,
        )
        .toArray();
}

/** When the earliest pending row may be attempted (a crashed attempt's lease must run out first). */
export function earliestDue(sql: SqlStorage): number | null {
  return sql
    .exec<{ at: number | null }>(
      "SELECT MIN(MAX(next_at, COALESCE(lease_until, 0))) AS at FROM scheduled WHERE status = 'PENDING'",
    )
    .one().at;
}

export function dueRows(sql: SqlStorage, now: number, limit: number): ScheduledRow[] {
  return sql
    .exec<ScheduledRow>(
      `SELECT * FROM scheduled WHERE status = 'PENDING' AND next_at <= ? AND COALESCE(lease_until, 0) <= ?
       ORDER BY next_at, rowid LIMIT ?`,
      now,
      now,
      limit,
    )
    .toArray();
}

type Patchable = Pick<
  ScheduledRow,
  "status" | "attempts" | "last_error" | "next_at" | "lease_until" | "sent_at" | "message_id" | "send_at"
>;

export function patchScheduled(sql: SqlStorage, id: string, patch: Partial<Patchable>, now: number): void {
  const entries = Object.entries(patch);
  sql.exec(
    `UPDATE scheduled SET ${entries.map(([column]) => `${column} = ?`).join(", ")}${entries.length ? ", " : ""}updated_at = ? WHERE id = ?`,
    ...entries.map(([, value]) => value as number | string | null),
    now,
    id,
  );
}

/** Records one finished run of a recurring row as its own history row. */
export function insertRun(
  sql: SqlStorage,
  parent: ScheduledRow,
  run: {
    id: string;
    status: "SENT" | "FAILED";
    attempts: number;
    error: string | null;
    sentAt: number | null;
  },
  now: number,
): void {
  sql.exec(
    `INSERT INTO scheduled (id, jid, content, media_url, media_type, file_name, send_at, timezone, cron, status,
       attempts, last_error, next_at, sent_at, message_id, parent_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    run.id,
    parent.jid,
    parent.content,
    parent.media_url,
    parent.media_type,
    parent.file_name,
    parent.send_at,
    parent.timezone,
    run.status,
    run.attempts,
    run.error,
    parent.send_at,
    run.sentAt,
    parent.message_id,
    parent.id,
    now,
    now,
  );
}

export function pruneScheduledHistory(sql: SqlStorage): void {
  sql.exec(
    `DELETE FROM scheduled WHERE id IN (
       SELECT id FROM scheduled WHERE status != 'PENDING'
       ORDER BY COALESCE(sent_at, updated_at) DESC, rowid DESC LIMIT -1 OFFSET ?)`,
    HISTORY_KEPT,
  );
}

export function deleteScheduled(sql: SqlStorage, id: string): boolean {
  return sql.exec("DELETE FROM scheduled WHERE id = ?", id).rowsWritten > 0;
}
