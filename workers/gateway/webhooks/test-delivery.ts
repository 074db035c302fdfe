import { attemptDelivery } from "../../../durable-objects/messaging/webhooks/send";
import type { WebhookPayload } from "../../../durable-objects/messaging/webhooks/types";
import type { WebhookRow } from "../../db/schema";
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

export async function sendTestDelivery(
  webhook: Pick<WebhookRow, "id" | "name" | "url" | "secret">,
  sessionSlug: string,
  allowedHostsSetting: string | undefined,
): Promise<TestDeliveryResult> {
  const payload: WebhookPayload = {
    event: TEST_EVENT,
    sessionId: sessionSlug,
    timestamp: new Date().toISOString(),
    data: { message: "Test delivery from Switchboard", webhookId: webhook.id, webhookName: webhook.name },
  };
  const result = await attemptDelivery(
    {
      url: webhook.url,
      secret: webhook.secret,
      messageId: newMessageId(),
      body: JSON.stringify(payload),
      allowedHosts: allowedHostsOf(allowedHostsSetting),
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
  const error = result.error ?? "unknown failure";
  return {
    ok: false,
    message: `Test delivery failed: ${error}`,
    statusCode: result.statusCode,
    responseTimeMs,
    error,
  };
}
