import { failure, type Outcome, type SessionContext, success } from "../context";
import { offerNewWork, webhookWork } from "./engine";
import {
  addMissingColumns,
  findDelivery,
  findEndpoint,
  insertDelivery,
  listDeliveries,
  pendingDeliveryCount,
  recordOf,
  WEBHOOK_TABLES,
} from "./store";
import type { DeliveryRecord } from "./types";

/**
 * Webhook delivery from the outbox: the tables, the deliveries log and redelivery the Worker reads
 * through `SessionDO.call`, and the alarm work (engine.ts) that sends them.
 */
export const WEBHOOK_SCHEMA: readonly string[] = WEBHOOK_TABLES;
/** Run after WEBHOOK_SCHEMA when the object wakes: columns added since the tables first shipped. */
export const upgradeWebhookSchema = (sql: SqlStorage): void => addMissingColumns(sql);
export { offerNewWork, setEndpoints } from "./engine";
/** Called as events are emitted, so sessions without webhooks keep a bounded outbox too. */
export { pruneSoon as keepOutboxBounded } from "./retention";
export { webhookWork };

/** Deliveries still owed to some endpoint (queued or waiting for a retry). */
export const pendingDeliveries = (sql: SqlStorage): number => pendingDeliveryCount(sql);

const notFound = failure(404, "Delivery not found");

export const webhooksApi = {
  /** The endpoint's log, newest first; an endpoint this session never delivered to has an empty one. */
  "webhook.deliveries": (
    ctx: SessionContext,
    input: { webhookId: string; limit: number; offset: number },
  ): Outcome<{ items: DeliveryRecord[]; total: number }> => {
    const { rows, total } = listDeliveries(ctx.sql, input.webhookId, input.limit, input.offset);
    return success({ items: rows.map(recordOf), total });
  },

  /**
   * Sends the same event again with the same `webhook-id` (receivers deduplicate on it), as a delivery
   * of its own: due at once, with a fresh set of attempts, whatever else the endpoint is retrying.
   */
  "webhook.redeliver": async (
    ctx: SessionContext,
    input: { webhookId: string; deliveryId: string },
  ): Promise<Outcome<DeliveryRecord>> => {
    const original = findDelivery(ctx.sql, input.deliveryId);
    if (!original || original.endpoint_id !== input.webhookId) return notFound;
    if (!findEndpoint(ctx.sql, input.webhookId)?.isActive)
      return failure(409, "The webhook is inactive: activate it before redelivering");
    const stored = ctx.sql.exec("SELECT 1 FROM outbox WHERE seq = ?", original.outbox_seq).toArray();
    if (stored.length === 0) return failure(409, "The event is no longer stored");
    const now = ctx.now();
    const id = insertDelivery(ctx.sql, {
      endpointId: original.endpoint_id,
      outboxSeq: original.outbox_seq,
      messageId: original.message_id,
      event: original.event,
      nextAt: now,
      now,
    });
    offerNewWork(ctx.sql);
    await ctx.wake(now);
    const created = findDelivery(ctx.sql, id);
    return created ? success(recordOf(created)) : notFound;
  },
};
