import type { NetworkEvent } from "../../bridge/src/protocol/messaging";
import type { Operation } from "../../bridge/src/protocol/operations";
import type { Json } from "../../bridge/src/protocol/seam";
import type { Env } from "../../workers/core/env";
import { subscribeAgain } from "../messaging/chats/presence";
import {
  availabilityChange,
  loadConfigFromD1,
  readConfigCopy,
  type SessionConfigCopy,
  writeConfigCopy,
} from "../messaging/config/session";
import {
  failure,
  type Outcome,
  type SessionContext,
  type Transfer,
  type WebhookEvent,
} from "../messaging/context";
import { pushToEventStreams } from "../messaging/events/stream";
import { findMedia, type StoredMedia } from "../messaging/media/store";
import { appendToOutbox } from "../messaging/outbox";
import { addMissingColumns, ensureSchema } from "../messaging/schema";
import {
  keepOutboxBounded,
  offerNewWork,
  setEndpoints,
  upgradeWebhookSchema,
} from "../messaging/webhooks/deliveries";
import type { WebhookEndpoint } from "../messaging/webhooks/types";
import { handlerFor, SESSION_ADDED_COLUMNS, SESSION_SCHEMAS, TIMED_WORK } from "./api";
import { statusOf } from "./lifecycle";
import { applyNetworkEvent, type FollowUp } from "./network-events";
import type { SessionRecord } from "./storage";

export interface MessagingHost {
  readonly state: DurableObjectState;
  readonly env: Env;
  sessionId(): string;
  isConnected(): boolean;
  /** Sends the `wa` command to the bridge holding the session. */
  runOperation(operation: Operation, transfer?: Transfer): Promise<Outcome<unknown>>;
}

/**
 * The messaging side of a SessionDO: the context every messaging module runs with, the RPC
 * dispatcher, network events, and the alarm. Kept apart from session.ts, which owns the lifecycle,
 * the lease and the bridge link.
 */
export class SessionMessaging {
  private readonly sql: SqlStorage;
  /** The settings copy as last read or pushed; every incoming message consults it. */
  private configCopy: SessionConfigCopy | null = null;
  /** A wake after emit() is already on its way: a burst of events moves the alarm once. */
  private wakeQueued = false;

  constructor(private readonly host: MessagingHost) {
    this.sql = host.state.storage.sql;
    ensureSchema(this.sql, SESSION_SCHEMAS);
    addMissingColumns(this.sql, SESSION_ADDED_COLUMNS);
    upgradeWebhookSchema(this.sql);
  }

  context(): SessionContext {
    const host = this.host;
    return {
      sql: this.sql,
      env: host.env,
      sessionId: host.sessionId(),
      now: () => Date.now(),
      isConnected: () => host.isConnected(),
      wa: async (operation, transfer) => {
        if (!host.isConnected()) return failure(503, "Session not ready: WhatsApp is not connected");
        return (await host.runOperation(operation, transfer)) as Outcome<Json>;
      },
      emit: (event: WebhookEvent, data: object) => this.emit(event, data),
      wake: (at) => this.wake(at),
      config: () => this.config(),
    };
  }

  async call(name: string, input: unknown): Promise<Outcome<unknown>> {
    const handler = handlerFor(name);
    if (!handler) return failure(400, `Unknown session operation ${name}`);
    return handler(this.context(), input);
  }

  /** Applies one network event; the returned follow-ups run after the event is acknowledged. */
  apply(event: NetworkEvent): Promise<FollowUp[]> {
    return applyNetworkEvent(this.context(), event);
  }

  runFollowUps(followUps: FollowUp[]): void {
    for (const followUp of followUps) {
      followUp().catch((error: unknown) => {
        console.error(JSON.stringify({ msg: "session follow-up failed", error: String(error) }));
      });
    }
  }

  /** A stored file the lease holder reads (an upload to send, a received file a sticker is made of). */
  media(ref: string): Promise<StoredMedia | null> {
    return findMedia(this.context(), ref);
  }

  configure(copy: SessionConfigCopy): void {
    const before = this.configCopy ?? readConfigCopy(this.sql);
    writeConfigCopy(this.sql, copy);
    this.configCopy = copy;
    const change = availabilityChange(before?.settings, copy.settings);
    if (change !== null && this.host.isConnected()) this.runFollowUps([() => this.sendAvailability(change)]);
  }

  /** `alwaysOnline`: the account is shown online each time it connects (WhatsApp forgets it then). */
  private async availabilityOnConnect(): Promise<void> {
    const { settings } = await this.config();
    if (settings.alwaysOnline) await this.sendAvailability(true);
  }

  private async sendAvailability(online: boolean): Promise<void> {
    const outcome = await this.context().wa({ op: "availability", online });
    if (!outcome.ok) throw new Error(`availability ${online}: ${outcome.status} ${outcome.error}`);
  }

  /** The settings copy; read from D1 once, with no other event interleaving while it loads. */
  async config(): Promise<SessionConfigCopy> {
    this.configCopy ??= readConfigCopy(this.sql);
    if (this.configCopy) return this.configCopy;
    return this.host.state.blockConcurrencyWhile(async () => {
      const loaded =
        readConfigCopy(this.sql) ?? (await loadConfigFromD1(this.host.env.DB, this.host.sessionId()));
      writeConfigCopy(this.sql, loaded);
      this.configCopy = loaded;
      return loaded;
    });
  }

  emit(event: WebhookEvent, data: object): void {
    appendToOutbox(this.sql, event, data, Date.now());
    keepOutboxBounded(this.sql, Date.now());
    offerNewWork(this.sql);
    this.wakeSoon();
    // After the caller's transaction: a stream never sees an event that was rolled back.
    queueMicrotask(() => pushToEventStreams(this.host.state, this.host.sessionId()));
  }

  /** The Worker's copy of the session's webhook endpoints (replaces the previous one). */
  setWebhooks(endpoints: WebhookEndpoint[]): Promise<void> {
    return setEndpoints(this.context(), endpoints);
  }

  /**
   * Re-arms the alarm for whatever work is waiting. An edge restart can lose a pending alarm (local
   * development does), so the outbox resumes when the bridge links again even without one.
   */
  async resume(): Promise<void> {
    const at = this.earliestWork();
    if (at !== null) await this.rearm(at);
  }

  /** `connection.update` for webhooks whenever the session's state moves. */
  connectionChanged(before: SessionRecord, after: SessionRecord): void {
    if (after.state === before.state) return;
    if (after.state === "connected") {
      this.runFollowUps([() => this.availabilityOnConnect(), () => subscribeAgain(this.context())]);
    }
    this.emit("connection.update", {
      status: statusOf(after.state),
      state: after.state,
      previousState: before.state,
      me: after.me,
      lastDisconnect: after.lastDisconnect,
    });
  }

  async alarm(): Promise<void> {
    const ctx = this.context();
    for (const work of TIMED_WORK) {
      const next = work.next(ctx);
      if (next !== null && next <= Date.now()) await work.run(ctx);
    }
    await this.rescheduleAlarm();
  }

  async rescheduleAlarm(): Promise<void> {
    const at = this.earliestWork();
    if (at === null) await this.host.state.storage.deleteAlarm();
    else await this.host.state.storage.setAlarm(at);
  }

  private earliestWork(): number | null {
    const ctx = this.context();
    const times = TIMED_WORK.map((work) => work.next(ctx)).filter((at): at is number => at !== null);
    return times.length === 0 ? null : Math.min(...times);
  }

  /** emit() is synchronous and storage's alarm calls are not; the output gate holds replies until set. */
  private wakeSoon(): void {
    if (this.wakeQueued) return;
    this.wakeQueued = true;
    const at = this.earliestWork();
    const woken = at === null ? Promise.resolve() : this.rearm(at);
    woken
      .catch((error: unknown) => console.error(JSON.stringify({ msg: "wake failed", error: String(error) })))
      .finally(() => {
        this.wakeQueued = false;
      });
  }

  /** Like wake(), but sets the alarm even when one is stored, which re-registers a lost one. */
  private async rearm(at: number): Promise<void> {
    const current = await this.host.state.storage.getAlarm();
    await this.host.state.storage.setAlarm(current === null ? at : Math.min(current, at));
  }

  private async wake(at: number): Promise<void> {
    const current = await this.host.state.storage.getAlarm();
    if (current === null || current > at) await this.host.state.storage.setAlarm(at);
  }
}
