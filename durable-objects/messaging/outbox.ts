import type { Json } from "../../bridge/src/protocol/seam";
import type { WebhookEvent } from "./context";

/**
 * The webhook outbox: every event a webhook could subscribe to is appended here in the same
 * synchronous SQLite transaction as the change it describes, so no event is lost between "stored"
 * and "delivered". Delivery (signing, retries, logs) drains it in the webhooks module.
 */
export interface OutboxEntry {
  seq: number;
  event: WebhookEvent;
  data: Json;
  createdAt: number;
}

export function appendToOutbox(sql: SqlStorage, event: WebhookEvent, data: object, now: number): void {
  sql.exec("INSERT INTO outbox (event, data, created_at) VALUES (?, ?, ?)", event, JSON.stringify(data), now);
}

export function readOutbox(sql: SqlStorage, afterSeq: number, limit: number): OutboxEntry[] {
  return sql
    .exec<{ seq: number; event: string; data: string; created_at: number }>(
      "SELECT * FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?",
      afterSeq,
      limit,
    )
    .toArray()
    .map((row) => ({
      seq: row.seq,
      event: row.event as WebhookEvent,
      data: JSON.parse(row.data) as Json,
      createdAt: row.created_at,
    }));
}
