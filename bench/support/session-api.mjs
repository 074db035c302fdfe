// The benchmark's HTTP client (every answer counted by status) and the session-listing watcher.
import { internalIds, now, sleep } from "./common.mjs";

export const REQUEST_TIMEOUT_MS = 30_000;
/** GET /api/sessions is polled at most this often (one poll in flight at a time). */
export const POLL_INTERVAL_MS = 100;

/** undici's words for a reused keep-alive connection the server had already closed. */
export const isLostConnection = (causeMessage) =>
  /other side closed|ECONNRESET|socket hang up/i.test(causeMessage);

/** Counts every answer by status so a phase can tell whether it measured what it claims to. */
export class Api {
  constructor(baseUrl, key) {
    this.baseUrl = baseUrl;
    this.key = key;
    this.failures = [];
  }

  /**
   * Two answers mean "the request never reached the Worker; send it again", and are retried, nothing
   * else: wrangler dev's 503 "Your worker restarted mid-request" (it reloads once shortly after
   * starting), and, served directly by workerd, a keep-alive connection it closed just as this client
   * reused it ("other side closed", no response byte; the same race wrangler dev turns into that 503).
   */
  async call(method, route, body) {
    for (let attempt = 0; ; attempt++) {
      const result = await this.callOnce(method, route, body);
      const restarted = result.status === 503 && /restarted mid-request/.test(JSON.stringify(result.body));
      if (!(restarted || result.connectionLost) || attempt >= 2) return result;
      await sleep(200);
    }
  }

  async callOnce(method, route, body) {
    try {
      const response = await fetch(`${this.baseUrl}${route}`, {
        method,
        headers: {
          "X-API-Key": this.key,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await response.text();
      let json = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        json = { raw: text.slice(0, 300) };
      }
      return { status: response.status, body: json };
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : "";
      const message = `${error instanceof Error ? error.message : String(error)}${cause ? `: ${cause}` : ""}`;
      return { status: 0, body: { error: message }, connectionLost: isLostConnection(cause) };
    }
  }

  /** A call that must answer `expected`; anything else is recorded as a failure of the phase. */
  async expect(phase, method, route, body, expected = 200) {
    const result = await this.call(method, route, body);
    if (result.status !== expected) {
      this.failures.push({
        phase,
        request: `${method} ${route}`,
        status: result.status,
        body: JSON.stringify(result.body).slice(0, 300),
      });
    }
    return result;
  }
}

/**
 * Polls GET /api/sessions while anyone waits for a state, and resolves each waiter with the time the
 * first listing showing that state arrived (a poll sent before `notBefore` does not count), or with
 * null once its deadline (performance.now() time) passed.
 */
export class ListingWatcher {
  constructor(api) {
    this.api = api;
    this.waiters = new Map();
    this.lastState = new Map();
    this.polls = [];
    this.pollErrors = [];
    this.intervalMs = POLL_INTERVAL_MS;
    this.running = true;
    this.loop = this.run();
  }

  waitFor(sessionId, state, notBefore, deadline) {
    return new Promise((resolve) => {
      const list = this.waiters.get(sessionId) ?? [];
      list.push({ state, notBefore, deadline, resolve });
      this.waiters.set(sessionId, list);
    });
  }

  /** Resolves the waiters of one id with null (its request failed: nothing to wait for). */
  cancel(sessionId) {
    for (const waiter of this.waiters.get(sessionId) ?? []) waiter.resolve(null);
    this.waiters.delete(sessionId);
  }

  /** Resolves with `value` the waiters of `sessionId` that `pick` selects; keeps the others. */
  settle(sessionId, pick, value) {
    const list = this.waiters.get(sessionId);
    if (!list) return;
    const remaining = list.filter((waiter) => {
      if (!pick(waiter)) return true;
      waiter.resolve(value);
      return false;
    });
    if (remaining.length) this.waiters.set(sessionId, remaining);
    else this.waiters.delete(sessionId);
  }

  expire(at, everything = false) {
    for (const id of [...this.waiters.keys()]) this.settle(id, (w) => everything || w.deadline < at, null);
  }

  async run() {
    while (this.running) {
      this.expire(now());
      if (this.waiters.size === 0) {
        await sleep(10);
        continue;
      }
      const sentAt = now();
      const result = await this.api.call("GET", "/api/sessions");
      const receivedAt = now();
      this.polls.push({ sentAt, ms: receivedAt - sentAt });
      if (result.status !== 200 || !Array.isArray(result.body?.data)) {
        this.pollErrors.push({ status: result.status, body: JSON.stringify(result.body).slice(0, 300) });
      } else {
        for (const row of result.body.data) {
          this.lastState.set(row.sessionId, row.state);
          internalIds.set(row.sessionId, row.id);
          this.settle(row.sessionId, (w) => w.state === row.state && sentAt >= w.notBefore, receivedAt);
        }
      }
      await sleep(Math.max(0, this.intervalMs - (now() - sentAt)));
    }
  }

  /** Waits for every id to be listed in `state`; returns id -> arrival time (null if it never came). */
  async waitAll(ids, state, notBefore, deadline) {
    const arrivals = new Map();
    await Promise.all(
      ids.map(async (id) => arrivals.set(id, await this.waitFor(id, state, notBefore, deadline))),
    );
    return arrivals;
  }

  async stop() {
    this.running = false;
    this.expire(now(), true);
    await this.loop;
  }
}
