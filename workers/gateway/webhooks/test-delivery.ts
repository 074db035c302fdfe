import { attemptDelivery } from "../../../durable-objects/messaging/webhooks/send";
import type { WebhookPayload } from "../../../durable-objects/messaging/webhooks/types";
import type { Env } from "../../core/env";
import type { WebhookRow } from "../../db/schema";
import { openWebhookSecret, unopenedReason } from "../../webhooks/secrets";
import { newMessageId } from "../../webhooks/signing";
import { allowedHostsOf } from "../../webhooks/targets";

/**
 * `POST /webhooks/{sessionId}/{webhookId}/test`: one delivery made from the Worker while the caller
 * waits, through the same attempt code as real deliveries (target re-checked, signed, no redirects,
 * 15 s), so a passing test means the endpoint accepts the real thing. Nothing is queued or retried.
 */

export const TEST_EVENT = "webhook.test";

export interface TestDeliveryResult {
  ok: boolean;
  message: string;
  /** The endpoint's HTTP status, null when it never answered. */
  statusCode: number | null;
  responseTimeMs: number;
  error: string | null;
}

const failedWith = (
  error: string,
  statusCode: number | null,
  responseTimeMs: number,
): TestDeliveryResult => ({
  ok: false,
  message: `Test delivery failed: ${error}`,
  statusCode,
  responseTimeMs,
  error,
});

export async function sendTestDelivery(
  webhook: Pick<WebhookRow, "id" | "name" | "url" | "secret" | "secretSealed">,
  sessionSlug: string,
  env: Pick<Env, "SECRETS_MASTER_KEY" | "WEBHOOK_ALLOWED_HOSTS">,
): Promise<TestDeliveryResult> {
  let secret: string;
  try {
    secret = await openWebhookSecret(env.SECRETS_MASTER_KEY, webhook);
  } catch (error) {
    return failedWith(unopenedReason(error), null, 0);
  }
  const payload: WebhookPayload = {
    event: TEST_EVENT,
    sessionId: sessionSlug,
    timestamp: new Date().toISOString(),
    data: { message: "Test delivery from Switchboard", webhookId: webhook.id, webhookName: webhook.name },
  };
  const result = await attemptDelivery(
    {
      url: webhook.url,
      secret,
      messageId: newMessageId(),
      body: JSON.stringify(payload),
      allowedHosts: allowedHostsOf(env.WEBHOOK_ALLOWED_HOSTS),
    },
    Date.now,
  );
  const responseTimeMs = result.latencyMs ?? 0;
  if (result.delivered) {
    return {
      ok: true,
      message: `Test delivery succeeded: HTTP ${result.statusCode} in ${responseTimeMs} ms`,
      statusCode: result.statusCode,
      responseTimeMs,
      error: null,
    };
  }
  return failedWith(result.error ?? "unknown failure", result.statusCode, responseTimeMs);
}
