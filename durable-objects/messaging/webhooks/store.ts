import { eventIdOf } from "../events/log";
import type { DeliveryRecord, DeliveryStatus, WebhookEndpoint } from "./types";

/**
 * The SessionDO's webhook tables: its copy of the endpoints, one delivery row per (event, endpoint),
 * and a few counters. Every function is synchronous, so a caller's sequence of them commits together.
 */
export const WEBHOOK_TABLES = [
  // `first_failure_at`: start of the current run of failed attempts; null after any success.
  `CREATE TABLE IF NOT EXISTS webhook_endpoints (
     id TEXT PRIMARY KEY, url TEXT NOT NULL, secret TEXT NOT NULL, events TEXT NOT NULL,
     is_active INTEGER NOT NULL, first_failure_at INTEGER)`,
  // `n` is the order events were queued in; `message_id` is the webhook-id header, kept across retries.
  `CREATE TABLE IF NOT EXISTS webhook_deliveries (
     n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, endpoint_id TEXT NOT NULL,
     outbox_seq INTEGER NOT NULL, message_id TEXT NOT NULL, event TEXT NOT NULL, status TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0, next_at INTEGER, status_code INTEGER, latency_ms INTEGER,
     error TEXT, created_at INTEGER NOT NULL, delivered_at INTEGER)`,
  "CREATE INDEX IF NOT EXISTS webhook_deliveries_queue ON webhook_deliveries (status, endpoint_id, n)",
  "CREATE INDEX IF NOT EXISTS webhook_deliveries_log ON webhook_deliveries (endpoint_id, n)",
  "CREATE INDEX IF NOT EXISTS webhook_deliveries_by_event ON webhook_deliveries (outbox_seq)",
  "CREATE INDEX IF NOT EXISTS webhook_deliveries_by_age ON webhook_deliveries (created_at)",
  // What is due, per endpoint: each delivery is attempted on its own schedule (engine.ts).
  "CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (status, endpoint_id, next_at)",
  "CREATE TABLE IF NOT EXISTS webhook_state (k TEXT PRIMARY KEY, v INTEGER NOT NULL)",
] as const;

/**
 * Columns added after the tables first shipped. SQLite has no ADD COLUMN IF NOT EXISTS, so each is
 * added when the object finds it missing (objects created before it keep their rows).
 */
const ADDED_COLUMNS: readonly { table: string; column: string; definition: string }[] = [
  // Whether the endpoint copy's secret is sealed; copies pushed before sealing existed hold plaintext.
  { table: "webhook_endpoints", column: "secret_sealed", definition: "INTEGER NOT NULL DEFAULT 0" },
];

export function addMissingColumns(sql: SqlStorage): void {
  for (const { table, column, definition } of ADDED_COLUMNS) {
    const columns = sql.exec<{ name: string }>(`PRAGMA table_info(${table})`).toArray();
    if (!columns.some((c) => c.name === column))
      sql.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
  }
}

export type StateKey = "fanned_out_seq" | "webhooks_loaded" | "load_failed_at" | "pruned_through_seq";

export interface EndpointRow extends WebhookEndpoint {
  firstFailureAt: number | null;
}

export type DeliveryRow = {
  n: number;
  id: string;
  endpoint_id: string;
  outbox_seq: number;
  message_id: string;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  next_at: number | null;
  status_code: number | null;
  latency_ms: number | null;
  error: string | null;
  created_at: number;
  delivered_at: number | null;
};

export function getState(sql: SqlStorage, key: StateKey): number | null {
  return sql.exec<{ v: number }>("SELECT v FROM webhook_state WHERE k = ?", key).toArray()[0]?.v ?? null;
}

export function setState(sql: SqlStorage, key: StateKey, value: number): void {
  sql.exec("INSERT OR REPLACE INTO webhook_state (k, v) VALUES (?, ?)", key, value);
}

type EndpointSqlRow = {
  id: string;
  url: string;
  secret: string;
  secret_sealed: number;
  events: string;
  is_active: number;
  first_failure_at: number | null;
};

const endpointOf = (row: EndpointSqlRow): EndpointRow => ({
  id: row.id,
  url: row.url,
  secret: row.secret,
  secretSealed: row.secret_sealed === 1,
  events: JSON.parse(row.events) as string[],
  isActive: row.is_active === 1,
  firstFailureAt: row.first_failure_at,
});

export function readEndpoints(sql: SqlStorage): EndpointRow[] {
  return sql.exec<EndpointSqlRow>("SELECT * FROM webhook_endpoints ORDER BY id").toArray().map(endpointOf);
}

export function findEndpoint(sql: SqlStorage, id: string): EndpointRow | null {
  const row = sql.exec<EndpointSqlRow>("SELECT * FROM webhook_endpoints WHERE id = ?", id).toArray()[0];
  return row ? endpointOf(row) : null;
}

/** The object has a copy to work with: one was pushed or loaded, or rows exist from before the flag. */
export function endpointsKnown(sql: SqlStorage): boolean {
  if (getState(sql, "webhooks_loaded") === 1) return true;
  return sql.exec("SELECT 1 FROM webhook_endpoints LIMIT 1").toArray().length > 0;
}

export function hasActiveEndpoints(sql: SqlStorage): boolean {
  return sql.exec("SELECT 1 FROM webhook_endpoints WHERE is_active = 1 LIMIT 1").toArray().length > 0;
}

/** Ends every pending delivery of the endpoints `where` selects, with `reason`. */
function failPendingOf(sql: SqlStorage, where: string, reason: string, ...args: SqlStorageValue[]): void {
  sql.exec(
    `UPDATE webhook_deliveries SET status = 'failed', next_at = NULL, error = ?
     WHERE status = 'pending' AND endpoint_id IN (${where})`,
    reason,
    ...args,
  );
}

/**
 * Replaces the copy wholesale. A failure streak survives the push (the endpoint did not get better by
 * being edited); queued deliveries of a removed or paused endpoint end, visible in the log.
 */
export function replaceEndpoints(sql: SqlStorage, endpoints: readonly WebhookEndpoint[]): void {
  const streaks = new Map(readEndpoints(sql).map((e) => [e.id, e.firstFailureAt]));
  sql.exec("DELETE FROM webhook_endpoints");
  for (const e of endpoints) {
    sql.exec(
      `INSERT OR REPLACE INTO webhook_endpoints (id, url, secret, secret_sealed, events, is_active, first_failure_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      e.id,
      e.url,
      e.secret,
      e.secretSealed ? 1 : 0,
      JSON.stringify(e.events),
      e.isActive ? 1 : 0,
      e.isActive ? (streaks.get(e.id) ?? null) : null,
    );
  }
  failPendingOf(
    sql,
    "SELECT DISTINCT endpoint_id FROM webhook_deliveries WHERE endpoint_id NOT IN (SELECT id FROM webhook_endpoints)",
    "endpoint removed",
  );
  failPendingOf(sql, "SELECT id FROM webhook_endpoints WHERE is_active = 0", "endpoint is inactive");
  setState(sql, "webhooks_loaded", 1);
}

/** Stops the endpoint here (the caller mirrors it to D1); its queue ends with `endpoint disabled: …`. */
export function disableLocally(sql: SqlStorage, endpointId: string, reason: string): void {
  sql.exec("UPDATE webhook_endpoints SET is_active = 0, first_failure_at = NULL WHERE id = ?", endpointId);
  failPendingOf(sql, "?", `endpoint disabled: ${reason}`, endpointId);
}

export function setFailureStreak(sql: SqlStorage, endpointId: string, since: number | null): void {
  sql.exec("UPDATE webhook_endpoints SET first_failure_at = ? WHERE id = ?", since, endpointId);
}

const subscribed = (endpoint: WebhookEndpoint, event: string) =>
  endpoint.events.includes("*") || endpoint.events.includes(event);

export function insertDelivery(
  sql: SqlStorage,
  d: { endpointId: string; outboxSeq: number; messageId: string; event: string; nextAt: number; now: number },
): string {
  const id = crypto.randomUUID();
  sql.exec(
    `INSERT INTO webhook_deliveries (id, endpoint_id, outbox_seq, message_id, event, status, next_at, created_at)
     VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)`,
    id,
    d.endpointId,
    d.outboxSeq,
    d.messageId,
    d.event,
    d.nextAt,
    d.now,
  );
  return id;
}

/**
 * Turns outbox entries past the cursor into deliveries for the endpoints active now, and moves the
 * cursor in the same synchronous block, so an entry is fanned out exactly once. Returns how many
 * entries it consumed (at most `batch`).
 */
export function fanOut(
  sql: SqlStorage,
  sessionId: string,
  now: number,
  firstDelay: number,
  batch = 1000,
): number {
  const cursor = getState(sql, "fanned_out_seq") ?? 0;
  const rows = sql
    .exec<{ seq: number; event: string }>(
      "SELECT seq, event FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?",
      cursor,
      batch,
    )
    .toArray();
  const last = rows.at(-1);
  if (!last) return 0;
  const endpoints = readEndpoints(sql).filter((e) => e.isActive);
  for (const row of rows) {
    for (const endpoint of endpoints.filter((e) => subscribed(e, row.event))) {
      insertDelivery(sql, {
        endpointId: endpoint.id,
        outboxSeq: row.seq,
        messageId: eventIdOf(sessionId, row.seq), // the log's id: webhooks and the log agree
        event: row.event,
        nextAt: now + firstDelay,
        now,
      });
    }
  }
  setState(sql, "fanned_out_seq", last.seq);
  return rows.length;
}

export function hasUnfanned(sql: SqlStorage): boolean {
  const cursor = getState(sql, "fanned_out_seq") ?? 0;
  return sql.exec("SELECT 1 FROM outbox WHERE seq > ? LIMIT 1", cursor).toArray().length > 0;
}

/**
 * Events that arrive by the thousand when a phone is paired (one per contact). They yield to every
 * other event and never take an endpoint's last free slot (engine.ts).
 */
export const BULK_EVENTS: readonly string[] = ["contact.update"];
const IS_BULK = `event IN (${BULK_EVENTS.map((e) => `'${e}'`).join(", ")})`;

/** Endpoints with at least one delivery due now. */
export function endpointsWithDue(sql: SqlStorage, now: number): string[] {
  return sql
    .exec<{ endpoint_id: string }>(
      "SELECT DISTINCT endpoint_id FROM webhook_deliveries WHERE status = 'pending' AND next_at <= ?",
      now,
    )
    .toArray()
    .map((row) => row.endpoint_id);
}

/** Up to `limit` of the endpoint's due deliveries of one class (bulk or not), longest waiting first. */
export function dueDeliveries(
  sql: SqlStorage,
  endpointId: string,
  now: number,
  bulk: boolean,
  limit: number,
): DeliveryRow[] {
  if (limit <= 0) return [];
  return sql
    .exec<DeliveryRow>(
      `SELECT * FROM webhook_deliveries
       WHERE status = 'pending' AND endpoint_id = ? AND next_at <= ? AND ${bulk ? "" : "NOT "}${IS_BULK}
       ORDER BY next_at, n LIMIT ?`,
      endpointId,
      now,
      limit,
    )
    .toArray();
}

/** When each endpoint's next delivery of each class falls due (the alarm's input). */
export function nextDue(sql: SqlStorage): { endpointId: string; bulk: boolean; at: number }[] {
  return sql
    .exec<{ endpoint_id: string; bulk: number; at: number | null }>(
      `SELECT endpoint_id, ${IS_BULK} AS bulk, MIN(next_at) AS at FROM webhook_deliveries
       WHERE status = 'pending' GROUP BY endpoint_id, bulk`,
    )
    .toArray()
    .map((row) => ({ endpointId: row.endpoint_id, bulk: row.bulk === 1, at: row.at ?? 0 }));
}

/** Claims a delivery for an attempt: not due again until `until`, unless the attempt records sooner. */
export function lease(sql: SqlStorage, id: string, until: number): void {
  sql.exec("UPDATE webhook_deliveries SET next_at = ? WHERE id = ? AND status = 'pending'", until, id);
}

export function findDelivery(sql: SqlStorage, id: string): DeliveryRow | null {
  return sql.exec<DeliveryRow>("SELECT * FROM webhook_deliveries WHERE id = ?", id).toArray()[0] ?? null;
}

/** Records an attempt; a row that ended meanwhile (endpoint paused or removed) stays ended unless delivered. */
export function recordAttempt(
  sql: SqlStorage,
  id: string,
  patch: Pick<
    DeliveryRow,
    "status" | "attempts" | "next_at" | "status_code" | "latency_ms" | "error" | "delivered_at"
  >,
): void {
  sql.exec(
    `UPDATE webhook_deliveries SET status = ?, attempts = ?, next_at = ?, status_code = ?, latency_ms = ?,
       error = ?, delivered_at = ?
     WHERE id = ? AND (status = 'pending' OR ? = 'delivered')`,
    patch.status,
    patch.attempts,
    patch.next_at,
    patch.status_code,
    patch.latency_ms,
    patch.error,
    patch.delivered_at,
    id,
    patch.status,
  );
}

export function listDeliveries(
  sql: SqlStorage,
  endpointId: string,
  limit: number,
  offset: number,
): { rows: DeliveryRow[]; total: number } {
  const rows = sql
    .exec<DeliveryRow>(
      "SELECT * FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY n DESC LIMIT ? OFFSET ?",
      endpointId,
      limit,
      offset,
    )
    .toArray();
  const total =
    sql
      .exec<{ c: number }>("SELECT count(*) AS c FROM webhook_deliveries WHERE endpoint_id = ?", endpointId)
      .toArray()[0]?.c ?? 0;
  return { rows, total };
}

export function pendingDeliveryCount(sql: SqlStorage): number {
  return (
    sql
      .exec<{ c: number }>("SELECT count(*) AS c FROM webhook_deliveries WHERE status = 'pending'")
      .toArray()[0]?.c ?? 0
  );
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export const recordOf = (row: DeliveryRow): DeliveryRecord => ({
  id: row.id,
  webhookId: row.endpoint_id,
  messageId: row.message_id,
  event: row.event,
  status: row.status,
  attempts: row.attempts,
  statusCode: row.status_code,
  latencyMs: row.latency_ms,
  error: row.error,
  createdAt: new Date(row.created_at).toISOString(),
  nextAttemptAt: row.status === "pending" ? iso(row.next_at) : null,
  deliveredAt: iso(row.delivered_at),
});
