import { allowedHostsOf } from "../../../workers/webhooks/targets";
import type { SessionContext, TimedWork } from "../context";
import { pruneSoon } from "./retention";
import { retryDelay, retrySchedule } from "./schedule";
import { attemptDelivery } from "./send";
import {
  type DeliveryRow,
  disableLocally,
  type EndpointRow,
  endpointsKnown,
  fanOut,
  findEndpoint,
  getState,
  hasActiveEndpoints,
  hasUnfanned,
  headOf,
  queueHeads,
  recordAttempt,
  replaceEndpoints,
  setFailureStreak,
  setState,
} from "./store";
import type { WebhookEndpoint, WebhookPayload } from "./types";

/**
 * The delivery engine, driven by the SessionDO alarm: load the endpoint copy if the object never got
 * one, fan the outbox out into deliveries, then drain each endpoint's queue strictly in order (only its
 * oldest pending delivery may be attempted), endpoints in parallel. docs/webhook-delivery-internals.md
 * has the tables, the state machine and the schedule.
 */

/** An endpoint failing every attempt this long is disabled (Standard Webhooks' advice). */
export const FAILING_DISABLE_MS = 5 * 24 * 3_600_000;
/** One alarm run stops starting attempts after this, so other timed work gets its turn. */
export const DRAIN_BUDGET_MS = 10_000;
/** Attempts one alarm run may start: a fresh invocation gets a fresh subrequest allowance. */
export const ATTEMPTS_PER_RUN = 200;
/** After D1 could not be read, wait this long before trying again. */
export const LOAD_RETRY_MS = 30_000;

/**
 * Endpoints with an attempt in flight, per object: alarm runs can overlap (an alarm and a wake while
 * the previous run still awaits a receiver) and one endpoint must never have two attempts at once.
 * Keyed by the object's SQL handle because objects of one class can share an isolate.
 */
const inFlight = new WeakMap<SqlStorage, Set<string>>();

function busy(sql: SqlStorage): Set<string> {
  let set = inFlight.get(sql);
  if (!set) {
    set = new Set();
    inFlight.set(sql, set);
  }
  return set;
}

const firstDelay = (ctx: SessionContext) => retrySchedule(ctx.env)[0] ?? 0;

function fanOutAll(ctx: SessionContext): void {
  while (fanOut(ctx.sql, ctx.now(), firstDelay(ctx)) > 0) {
    // each call consumes one batch of outbox entries
  }
}

type D1Endpoint = { id: string; url: string; secret: string; events: string; is_active: number };

/** The session's own webhooks plus its owner's global ones (session_id NULL), as D1 has them. */
async function loadFromD1(db: D1Database, sessionId: string): Promise<WebhookEndpoint[]> {
  const { results } = await db
    .prepare(
      `SELECT id, url, secret, events, is_active FROM webhooks
       WHERE session_id = ? OR (session_id IS NULL AND user_id = (SELECT user_id FROM sessions WHERE id = ?))`,
    )
    .bind(sessionId, sessionId)
    .all<D1Endpoint>();
  return results.map((row) => ({
    id: row.id,
    url: row.url,
    secret: row.secret,
    events: JSON.parse(row.events) as string[],
    isActive: row.is_active === 1,
  }));
}

/** True once the object has an endpoint copy; reads D1 the first time only. */
async function ensureEndpoints(ctx: SessionContext): Promise<boolean> {
  if (endpointsKnown(ctx.sql)) return true;
  try {
    const loaded = await loadFromD1(ctx.env.DB, ctx.sessionId);
    // A copy pushed while D1 answered is at least as new as what D1 said: keep it.
    if (!endpointsKnown(ctx.sql)) replaceEndpoints(ctx.sql, loaded);
    return true;
  } catch (error) {
    setState(ctx.sql, "load_failed_at", ctx.now());
    console.error(JSON.stringify({ msg: "webhook endpoints not loaded", error: String(error) }));
    return false;
  }
}

/** The Worker's push: events so far go to the endpoints that existed when they happened. */
export async function setEndpoints(
  ctx: SessionContext,
  endpoints: readonly WebhookEndpoint[],
): Promise<void> {
  // Without a copy yet, fanning out first would drop events owed to endpoints D1 already had.
  if (endpointsKnown(ctx.sql)) fanOutAll(ctx);
  replaceEndpoints(ctx.sql, endpoints);
  fanOutAll(ctx);
  const at = webhookWork.next(ctx);
  if (at !== null) await ctx.wake(at);
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

function payloadOf(ctx: SessionContext, head: DeliveryRow, slug: string): string | null {
  const row = ctx.sql
    .exec<{ event: string; data: string; created_at: number }>(
      "SELECT event, data, created_at FROM outbox WHERE seq = ?",
      head.outbox_seq,
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

const ended = (error: string, attempts: number) =>
  ({
    status: "failed",
    attempts,
    next_at: null,
    status_code: null,
    latency_ms: null,
    error,
    delivered_at: null,
  }) as const;

/** One attempt of the endpoint's head delivery, and what it means for the delivery and the endpoint. */
async function attemptHead(ctx: SessionContext, endpoint: EndpointRow, head: DeliveryRow, slug: string) {
  const body = payloadOf(ctx, head, slug);
  if (body === null) return recordAttempt(ctx.sql, head.id, ended("event no longer stored", head.attempts));
  const result = await attemptDelivery(
    {
      url: endpoint.url,
      secret: endpoint.secret,
      messageId: head.message_id,
      body,
      allowedHosts: allowedHostsOf(ctx.env.WEBHOOK_ALLOWED_HOSTS),
    },
    ctx.now,
  );
  const now = ctx.now();
  const attempts = head.attempts + 1;
  const measured = { attempts, status_code: result.statusCode, latency_ms: result.latencyMs };
  if (result.delivered) {
    recordAttempt(ctx.sql, head.id, {
      ...measured,
      status: "delivered",
      next_at: null,
      error: null,
      delivered_at: now,
    });
    setFailureStreak(ctx.sql, endpoint.id, null);
    return;
  }
  if (result.gone) {
    recordAttempt(ctx.sql, head.id, {
      ...measured,
      status: "failed",
      next_at: null,
      error: "endpoint disabled: 410 Gone",
      delivered_at: null,
    });
    return disable(ctx, endpoint.id, "410 Gone");
  }
  const delay = retryDelay(attempts, retrySchedule(ctx.env), result.retryAfterMs);
  recordAttempt(ctx.sql, head.id, {
    ...measured,
    status: delay === null ? "failed" : "pending",
    next_at: delay === null ? null : now + delay,
    error: result.error,
    delivered_at: null,
  });
  const since = findEndpoint(ctx.sql, endpoint.id)?.firstFailureAt ?? now;
  setFailureStreak(ctx.sql, endpoint.id, since);
  if (now - since >= FAILING_DISABLE_MS) await disable(ctx, endpoint.id, "failing for 5 days");
}

/** Shared by the endpoints drained in one alarm run; whatever is left is due at the next alarm. */
type RunBudget = { started: number; attempts: number };

/** Works one endpoint's queue while its head is due: a success or a final failure lets the next one go. */
async function drain(ctx: SessionContext, endpointId: string, slug: string, run: RunBudget): Promise<void> {
  const flying = busy(ctx.sql);
  if (flying.has(endpointId)) return;
  flying.add(endpointId);
  try {
    while (ctx.now() - run.started < DRAIN_BUDGET_MS && run.attempts < ATTEMPTS_PER_RUN) {
      fanOutAll(ctx); // events that arrived during the last attempt join the queues now
      const head = headOf(ctx.sql, endpointId);
      if (!head || (head.next_at ?? 0) > ctx.now()) return;
      const endpoint = findEndpoint(ctx.sql, endpointId);
      if (!endpoint?.isActive) {
        const reason = endpoint ? "endpoint is inactive" : "endpoint removed";
        recordAttempt(ctx.sql, head.id, ended(reason, head.attempts));
        continue;
      }
      run.attempts++;
      await attemptHead(ctx, endpoint, head, slug);
    }
  } finally {
    flying.delete(endpointId);
  }
}

async function runDeliveries(ctx: SessionContext): Promise<void> {
  const started = ctx.now();
  if (!(await ensureEndpoints(ctx))) return;
  fanOutAll(ctx);
  pruneSoon(ctx.sql, started);
  const flying = busy(ctx.sql);
  const due = queueHeads(ctx.sql).filter((h) => h.nextAt <= started && !flying.has(h.endpointId));
  if (due.length === 0) return;
  const { slug } = await ctx.config();
  const run: RunBudget = { started, attempts: 0 };
  await Promise.all(due.map((head) => drain(ctx, head.endpointId, slug, run)));
}

export const webhookWork: TimedWork = {
  next: (ctx) => {
    const now = ctx.now();
    const times: number[] = [];
    if (hasUnfanned(ctx.sql)) {
      const failedAt = getState(ctx.sql, "load_failed_at");
      if (!endpointsKnown(ctx.sql))
        times.push(failedAt === null ? now : Math.max(now, failedAt + LOAD_RETRY_MS));
      else if (hasActiveEndpoints(ctx.sql)) times.push(now);
    }
    const flying = busy(ctx.sql);
    for (const head of queueHeads(ctx.sql)) if (!flying.has(head.endpointId)) times.push(head.nextAt);
    return times.length === 0 ? null : Math.max(0, Math.min(...times));
  },
  run: runDeliveries,
};
