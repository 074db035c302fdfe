/**
 * The webhook contract between the Worker (owner of the endpoint directory in D1) and the SessionDO
 * (owner of the outbox, the deliveries and their log).
 */

/** One endpoint as the SessionDO keeps it: the session's own webhooks plus the owner's global ones. */
export interface WebhookEndpoint {
  id: string;
  url: string;
  /** As D1 stores it: sealed when `secretSealed`, else plaintext (workers/webhooks/secrets.ts opens it). */
  secret: string;
  secretSealed: boolean;
  /** Event names, or ["*"] for all. */
  events: string[];
  isActive: boolean;
}

export type DeliveryStatus = "pending" | "delivered" | "failed";

/** One event for one endpoint and how its delivery went (the deliveries log). */
export interface DeliveryRecord {
  id: string;
  webhookId: string;
  /** The `webhook-id` header: the same on every attempt and on redelivery. */
  messageId: string;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  /** HTTP status of the last attempt, null when none answered. */
  statusCode: number | null;
  latencyMs: number | null;
  error: string | null;
  createdAt: string;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
}

/** The body every delivery POSTs (JSON). */
export interface WebhookPayload {
  event: string;
  /** The session's public id. */
  sessionId: string;
  /** When the event happened, ISO 8601. */
  timestamp: string;
  data: unknown;
}
