import { attemptHttpWake, expireHttpWake, type HttpWake, startHttpRuns } from "../../workers/control/runs";
import type { Env } from "../../workers/core/env";
import { database } from "../../workers/db/client";

const PREFIX = "http:";
const API_URL_KEY = "apiUrl";
/** Wakes handled per alarm: the rest are due at once and take the next alarm (a loop with a budget). */
const ALARM_BUDGET = 25;

/**
 * The RunDispatcher's http runs (workers/control/runs/http-adapter.ts): each running run's state in
 * the object's storage and one alarm at the earliest due time, so retries and timeouts survive an
 * isolate restart. Attempts are serialized by the dispatcher's queue: one attempt of a run at a time.
 */
export class HttpWakes {
  /** One pass at a time (attempts await the network; runner frames never wait on them). */
  #tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly env: Env,
    private readonly storage: DurableObjectStorage,
  ) {}

  /** Queued http runs start now (their first attempt is sent at once), then every due wake runs. */
  dispatch(apiUrl: string | undefined): Promise<void> {
    const pass = this.#tail.then(() => this.#pass(apiUrl));
    this.#tail = pass.catch(() => undefined);
    return pass;
  }

  async #pass(apiUrl: string | undefined): Promise<void> {
    if (apiUrl) await this.storage.put(API_URL_KEY, apiUrl);
    const started = await startHttpRuns(this.env, database(this.env.DB), Date.now());
    for (const wake of started) await this.storage.put(PREFIX + wake.runId, wake);
    await this.runDue();
  }

  /** Every due wake: an attempt, or the timeout of one past its deadline. Then the next alarm. */
  private async runDue(): Promise<void> {
    const db = database(this.env.DB);
    const apiUrl = (await this.storage.get<string>(API_URL_KEY)) ?? "";
    const wakes = await this.storage.list<HttpWake>({ prefix: PREFIX });
    let budget = ALARM_BUDGET;
    for (const [key, wake] of wakes) {
      const now = Date.now();
      if (wake.nextAt > now || budget-- <= 0) continue;
      if (wake.deadlineAt <= now) {
        await expireHttpWake(this.env, db, wake);
        await this.storage.delete(key);
        continue;
      }
      const next = wake.accepted ? null : await attemptHttpWake(this.env, db, wake, apiUrl);
      if (next) await this.storage.put(key, next);
      else if (!wake.accepted) await this.storage.delete(key);
    }
    await this.#scheduleNext();
  }

  async #scheduleNext(): Promise<void> {
    const wakes = await this.storage.list<HttpWake>({ prefix: PREFIX });
    const due = [...wakes.values()].map((wake) => (wake.accepted ? wake.deadlineAt : wake.nextAt));
    if (due.length === 0) return;
    await this.storage.setAlarm(Math.max(Date.now(), Math.min(...due)));
  }
}
