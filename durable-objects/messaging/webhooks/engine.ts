import type { SessionContext, TimedWork } from "../context";
import { attemptOne, ended } from "./attempt";
import { pruneSoon } from "./retention";
import { retrySchedule } from "./schedule";
import { ATTEMPT_TIMEOUT_MS } from "./send";
import { freeSlots, isFlying, occupy, release } from "./slots";
import {
  BULK_EVENTS,
  type DeliveryRow,
  dueDeliveries,
  type EndpointRow,
  endpointsKnown,
  endpointsWithDue,
  fanOut,
  findEndpoint,
  getState,
  hasActiveEndpoints,
  hasUnfanned,
  lease,
  nextDue,
  recordAttempt,
  replaceEndpoints,
  setState,
} from "./store";
import type { WebhookEndpoint } from "./types";

/**
 * The delivery engine, driven by the SessionDO alarm: load the endpoint copy if the object never got
 * one, fan the outbox out into deliveries, then attempt every due delivery on its own schedule, up to
 * MAX_IN_FLIGHT_PER_WEBHOOK at once per endpoint (slots.ts). A delivery that keeps failing waits for
 * its own retries and holds back nothing else. docs/webhook-delivery-internals.md has the tables, the
 * state machine and the schedule.
 */

/** One alarm run stops starting attempts after this, so other timed work gets its turn. */
export const DRAIN_BUDGET_MS = 10_000;
/** Attempts one alarm run may start: a fresh invocation gets a fresh subrequest allowance. */
export const ATTEMPTS_PER_RUN = 200;
/** After D1 could not be read, wait this long before trying again. */
export const LOAD_RETRY_MS = 30_000;
/**
 * A claimed delivery is not due again for this long (its attempt records a real next time sooner).
 * Overlapping alarm runs cannot pick it twice, and one whose object died mid-attempt is retried.
 */
export const LEASE_MS = ATTEMPT_TIMEOUT_MS + 15_000;

const firstDelay = (ctx: SessionContext) => retrySchedule(ctx.env)[0] ?? 0;

function fanOutAll(ctx: SessionContext): void {
  while (fanOut(ctx.sql, ctx.sessionId, ctx.now(), firstDelay(ctx)) > 0) {
    // each call consumes one batch of outbox entries
  }
}

type D1Endpoint = {
  id: string;
  url: string;
  secret: string;
  secret_sealed: number;
  events: string;
  is_active: number;
};

/** The session's own webhooks plus its owner's global ones (session_id NULL), as D1 has them. */
async function loadFromD1(db: D1Database, sessionId: string): Promise<WebhookEndpoint[]> {
  const { results } = await db
    .prepare(
      `SELECT id, url, secret, secret_sealed, events, is_active FROM webhooks
       WHERE session_id = ? OR (session_id IS NULL AND user_id = (SELECT user_id FROM sessions WHERE id = ?))`,
    )
    .bind(sessionId, sessionId)
    .all<D1Endpoint>();
  return results.map((row) => ({
    id: row.id,
    url: row.url,
    secret: row.secret,
    secretSealed: row.secret_sealed === 1,
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

/** Shared by the attempts of one alarm run; whatever is left is due at the next alarm. */
type RunBudget = { started: number; attempts: number };

const withinBudget = (ctx: SessionContext, run: RunBudget) =>
  ctx.now() - run.started < DRAIN_BUDGET_MS && run.attempts < ATTEMPTS_PER_RUN;

/** The endpoint's due deliveries that fit its free slots: other events first, then bulk ones. */
function dueFor(ctx: SessionContext, endpointId: string, now: number, budget: number): DeliveryRow[] {
  const free = freeSlots(ctx.sql, endpointId);
  const fresh = (rows: DeliveryRow[]) => rows.filter((row) => !isFlying(ctx.sql, row.id));
  const others = fresh(dueDeliveries(ctx.sql, endpointId, now, false, Math.min(free.any, budget)));
  const room = Math.min(free.any - others.length, free.bulk, budget - others.length);
  return [...others, ...fresh(dueDeliveries(ctx.sql, endpointId, now, true, room))];
}

/**
 * Takes what may be attempted now, across endpoints, and leases it (synchronously, so overlapping
 * runs never take a delivery twice). Deliveries of an endpoint that is gone or paused end here.
 */
function claim(ctx: SessionContext, run: RunBudget): { endpoint: EndpointRow; delivery: DeliveryRow }[] {
  const now = ctx.now();
  const claimed: { endpoint: EndpointRow; delivery: DeliveryRow }[] = [];
  for (const endpointId of endpointsWithDue(ctx.sql, now)) {
    const budget = ATTEMPTS_PER_RUN - run.attempts - claimed.length;
    const endpoint = findEndpoint(ctx.sql, endpointId);
    for (const delivery of dueFor(ctx, endpointId, now, budget)) {
      if (!endpoint?.isActive) {
        const reason = endpoint ? "endpoint is inactive" : "endpoint removed";
        recordAttempt(ctx.sql, delivery.id, ended(reason, delivery.attempts));
        continue;
      }
      lease(ctx.sql, delivery.id, now + LEASE_MS);
      occupy(ctx.sql, delivery.id, { endpointId, bulk: BULK_EVENTS.includes(delivery.event) });
      claimed.push({ endpoint, delivery });
    }
  }
  return claimed;
}

/**
 * Each object's running pump, by its storage. An alarm run never overlaps the next one, so without
 * this an event emitted while one receiver takes its time (up to ATTEMPT_TIMEOUT_MS) would wait for
 * that attempt to end before any endpoint got it.
 */
const runningPumps = new WeakMap<SqlStorage, () => void>();

/** New work (an emitted event, a redelivery): a running pump starts what it can of it now. */
export function offerNewWork(sql: SqlStorage): void {
  runningPumps.get(sql)?.();
}

/**
 * Starts every claimable attempt, and claims again each time one ends (a freed slot) or new work is
 * offered, until the run's budget is spent; resolves once its last attempt has ended.
 */
function pump(ctx: SessionContext, slug: string, run: RunBudget): Promise<void> {
  return new Promise((resolve) => {
    let running = 0;
    const finish = () => {
      runningPumps.delete(ctx.sql);
      resolve();
    };
    const fill = () => {
      try {
        if (!withinBudget(ctx, run)) return;
        fanOutAll(ctx); // events that arrived since the last claim get deliveries now
        for (const { endpoint, delivery } of claim(ctx, run)) {
          running++;
          run.attempts++;
          attemptOne(ctx, endpoint, delivery, slug)
            .catch((error: unknown) => {
              console.error(JSON.stringify({ msg: "webhook attempt failed", error: String(error) }));
            })
            .finally(() => {
              release(ctx.sql, delivery.id);
              running--;
              fill();
            });
        }
      } catch (error) {
        console.error(JSON.stringify({ msg: "webhook claim failed", error: String(error) }));
      } finally {
        if (running === 0) finish();
      }
    };
    runningPumps.set(ctx.sql, fill);
    fill();
  });
}

async function runDeliveries(ctx: SessionContext): Promise<void> {
  const started = ctx.now();
  if (!(await ensureEndpoints(ctx))) return;
  fanOutAll(ctx);
  pruneSoon(ctx.sql, started);
  if (endpointsWithDue(ctx.sql, started).length === 0) return;
  const { slug } = await ctx.config();
  await pump(ctx, slug, { started, attempts: 0 });
}

/** When a delivery can next be started: due, and its endpoint has a slot of the right kind free. */
function nextDelivery(ctx: SessionContext): number | null {
  const times: number[] = [];
  for (const { endpointId, bulk, at } of nextDue(ctx.sql)) {
    const free = freeSlots(ctx.sql, endpointId);
    if (bulk ? free.bulk > 0 : free.any > 0) times.push(at);
  }
  return times.length === 0 ? null : Math.min(...times);
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
    const delivery = nextDelivery(ctx);
    if (delivery !== null) times.push(delivery);
    return times.length === 0 ? null : Math.max(0, Math.min(...times));
  },
  run: runDeliveries,
};
