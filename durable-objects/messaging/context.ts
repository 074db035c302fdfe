import type { Operation } from "../../bridge/src/protocol/operations";
import type { Json } from "../../bridge/src/protocol/seam";
import type { Env } from "../../workers/core/env";
import type { SessionConfigCopy } from "./config/session";

/**
 * How a SessionDO outcome reaches the Worker: data, or an HTTP-like failure the route passes on.
 * 503 always means "Session not ready" (no bridge, or WhatsApp not connected).
 */
export type FailureStatus = 400 | 403 | 404 | 409 | 413 | 500 | 503;
export type Outcome<T = null> = { ok: true; data: T } | { ok: false; status: FailureStatus; error: string };

export const success = <T>(data: T): Outcome<T> => ({ ok: true, data });
export const failure = (status: FailureStatus, error: string): Outcome<never> => ({
  ok: false,
  status,
  error,
});

/** Webhook events (the spec's eleven, poll votes, calls and contacts' presence); the outbox holds them for the webhooks dispatcher. */
export const WEBHOOK_EVENTS = [
  "message.received",
  "message.sent",
  "message.status",
  "connection.update",
  "group.update",
  "group.upsert",
  "group.participant",
  "contact.update",
  "status.update",
  "message.edited",
  "message.deleted",
  "poll.vote",
  "chat.update",
  "message.starred",
  "label.update",
  "label.association",
  "account.limits",
  "call.received",
  "presence.update",
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/**
 * What every messaging module gets from the SessionDO: its SQLite, a way to ask the bridge for a
 * WhatsApp operation, the outbox, and the alarm. Modules never touch the WebSocket or the lease.
 */
/**
 * A file an operation moves (a media send, a download): the bridge gets longer to answer, in
 * proportion to its size (bridge-commands.ts `commandTimeoutMs`).
 */
export interface Transfer {
  bytes: number;
}

export interface SessionContext {
  readonly sql: SqlStorage;
  readonly env: Env;
  /** The session's internal id (the Durable Object's name). */
  readonly sessionId: string;
  now(): number;
  /** WhatsApp is connected and a bridge link is up: operations can run now. */
  isConnected(): boolean;
  /** Runs an operation on the bridge; 503 when not connected, the bridge's status when refused. */
  wa(operation: Operation, transfer?: Transfer): Promise<Outcome<Json>>;
  /** Appends an event to the outbox, in the same transaction as the change that caused it. */
  emit(event: WebhookEvent, data: object): void;
  /** Makes sure the alarm fires no later than `at` (epoch ms). */
  wake(at: number): Promise<void>;
  /** Settings and bot configuration as last pushed by the Worker (or read from D1 once). */
  config(): Promise<SessionConfigCopy>;
}

/** Runs on the alarm: each timed module says when it next has work and does what is due. */
export interface TimedWork {
  next(ctx: SessionContext): number | null;
  run(ctx: SessionContext): Promise<void>;
}
