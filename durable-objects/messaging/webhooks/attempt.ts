import { openWebhookSecret, unopenedReason } from "../../../workers/webhooks/secrets";
import { allowedHostsOf } from "../../../workers/webhooks/targets";
import type { SessionContext } from "../context";
import { retryDelay, retrySchedule } from "./schedule";
import { type AttemptResult, attemptDelivery } from "./send";
import {
  type DeliveryRow,
  disableLocally,
  type EndpointRow,
  findEndpoint,
  recordAttempt,
  setFailureStreak,
} from "./store";
import type { WebhookPayload } from "./types";

/**
 * One attempt of one delivery and what its outcome means for the delivery (delivered, retried on its
 * own schedule, failed) and for the endpoint (failure streak, disabled on 410 or after 5 days).
 */

/** An endpoint failing every attempt this long is disabled (Standard Webhooks' advice). */
export const FAILING_DISABLE_MS = 5 * 24 * 3_600_000;

type Patch = Parameters<typeof recordAttempt>[2];

export const ended = (error: string, attempts: number): Patch => ({
  status: "failed",
  attempts,
  next_at: null,
  status_code: null,
  latency_ms: null,
  error,
  delivered_at: null,
});

function payloadOf(ctx: SessionContext, delivery: DeliveryRow, slug: string): string | null {
  const row = ctx.sql
    .exec<{ event: string; data: string; created_at: number }>(
      "SELECT event, data, created_at FROM outbox WHERE seq = ?",
      delivery.outbox_seq,
    )
    .toArray()[0];
  if (!row) return null;
  const payload: WebhookPayload = {
    event: row.event,
    sessionId: slug,
    timestamp: new Date(row.created_at).toISOString(),
    data: JSON.parse(row.data) as unknown,
  };
  return JSON.stringify(payload);
}

async function disable(ctx: SessionContext, endpointId: string, reason: string): Promise<void> {
  disableLocally(ctx.sql, endpointId, reason);
  try {
    await ctx.env.DB.prepare(
      "UPDATE webhooks SET is_active = 0, disabled_reason = ?, updated_at = ? WHERE id = ?",
    )
      .bind(reason, ctx.now(), endpointId)
      .run();
  } catch (error) {
    // The local copy is already stopped; the directory shows it on the Worker's next push or read.
    console.error(JSON.stringify({ msg: "webhook disable not mirrored", endpointId, error: String(error) }));
  }
}

/** A failed attempt that sent nothing. */
const unsent = (error: string): AttemptResult => ({
  delivered: false,
  gone: false,
  statusCode: null,
  latencyMs: null,
  error,
  retryAfterMs: null,
});

/**
 * A failure: this delivery waits for its own next attempt (or ends). The endpoint's failure streak
 * grows only for failures that are the receiver's (`blame`), not for a secret this side cannot open.
 */
async function recordFailure(
  ctx: SessionContext,
  endpoint: EndpointRow,
  delivery: DeliveryRow,
  result: AttemptResult,
  blame = true,
) {
  const now = ctx.now();
  const attempts = delivery.attempts + 1;
  const delay = retryDelay(attempts, retrySchedule(ctx.env), result.retryAfterMs);
  recordAttempt(ctx.sql, delivery.id, {
    attempts,
    status_code: result.statusCode,
    latency_ms: result.latencyMs,
    status: delay === null ? "failed" : "pending",
    next_at: delay === null ? null : now + delay,
    error: result.error,
    delivered_at: null,
  });
  if (!blame) return;
  const since = findEndpoint(ctx.sql, endpoint.id)?.firstFailureAt ?? now;
  setFailureStreak(ctx.sql, endpoint.id, since);
  if (now - since >= FAILING_DISABLE_MS) await disable(ctx, endpoint.id, "failing for 5 days");
}

/** One attempt of `delivery` to `endpoint`, recorded in the log when it ends. */
export async function attemptOne(
  ctx: SessionContext,
  endpoint: EndpointRow,
  delivery: DeliveryRow,
  slug: string,
): Promise<void> {
  const body = payloadOf(ctx, delivery, slug);
  if (body === null)
    return recordAttempt(ctx.sql, delivery.id, ended("event no longer stored", delivery.attempts));
  let secret: string;
  try {
    secret = await openWebhookSecret(ctx.env.SECRETS_MASTER_KEY, endpoint);
  } catch (error) {
    return recordFailure(ctx, endpoint, delivery, unsent(unopenedReason(error)), false);
  }
  const allowedHosts = allowedHostsOf(ctx.env.WEBHOOK_ALLOWED_HOSTS);
  const target = { url: endpoint.url, secret, messageId: delivery.message_id, body, allowedHosts };
  const result = await attemptDelivery(target, ctx.now);
  const measured = {
    attempts: delivery.attempts + 1,
    status_code: result.statusCode,
    latency_ms: result.latencyMs,
  };
  if (result.delivered) {
    recordAttempt(ctx.sql, delivery.id, {
      ...measured,
      status: "delivered",
      next_at: null,
      error: null,
      delivered_at: ctx.now(),
    });
    setFailureStreak(ctx.sql, endpoint.id, null);
    return;
  }
  if (!result.gone) return recordFailure(ctx, endpoint, delivery, result);
  const reason = "endpoint disabled: 410 Gone";
  recordAttempt(ctx.sql, delivery.id, {
    ...measured,
    status: "failed",
    next_at: null,
    error: reason,
    delivered_at: null,
  });
  await disable(ctx, endpoint.id, "410 Gone");
}
