/**
 * One held session: its link to the SessionDO (welcome, events with acks and replay, commands) and the
 * life of its WhatsApp socket through the seam, steered by the reconnect policy.
 *
 * The two connections fail independently on purpose. A blip on the edge link must not drop WhatsApp
 * (events queue up and are replayed), and a WhatsApp drop is reported to the edge as an event.
 */
import { toDataURL } from "qrcode";
import { z } from "zod";
import { type Backoff, backoffDelay, LINK_BACKOFF, WHATSAPP_BACKOFF } from "./backoff.ts";
import { EventQueue } from "./event-queue.ts";
import { errorMessage, type Log } from "./log.ts";
import {
  type AuthState,
  type BridgeToSession,
  CLOSE,
  type Me,
  parseFrame,
  type SessionEvent,
  type SessionToBridge,
  SessionToBridgeSchema,
} from "./protocol.ts";
import { decideReconnect } from "./reconnect-policy.ts";
import { type AfterClose, type LinkClose, ReconnectingSocket } from "./reconnecting-socket.ts";
import type { AuthUpdate, CloseInfo, Json, SocketHandlers, WhatsAppNetwork, WhatsAppSocket } from "./seam.ts";

export interface SessionRunnerOptions {
  sessionId: string;
  bridgeId: string;
  /** ws:// or wss:// origin of the edge, without a trailing slash. */
  edgeUrl: string;
  token: string;
  network: WhatsAppNetwork;
  log: Log;
  linkBackoff?: Backoff;
  whatsappBackoff?: Backoff;
  /** Retry delay after a 401 on the upgrade (a wrong token does not fix itself quickly). */
  slowRetryMs?: number;
  /**
   * The session left this bridge on the edge's word or its own. `release`: the fleet must be told
   * (the bridge gave it up); false when the edge itself took it away (4001, 4002).
   */
  onGone(sessionId: string, release: boolean): void;
}

type CommandFrame = Extract<SessionToBridge, { type: "command" }>;
type WelcomeFrame = Extract<SessionToBridge, { type: "welcome" }>;
type ResultBody = { id: string; ok: true; data?: Json } | { id: string; ok: false; error: string };
type Outcome = { ok: true; data?: Json } | { ok: false; error: string };

/** `disconnected.code` when the bridge closed WhatsApp itself (stop): WhatsApp gave no code. */
const NO_WHATSAPP_CODE = 0;
/** Results remembered so a command delivered twice (after a reconnect) is answered, not run, again. */
const REMEMBERED_RESULTS = 64;
/** Results that could not be sent while the link was down; sent after a welcome of the same lease. */
const MAX_HELD_RESULTS = 100;
/** Keys per `auth` event when clearing, so one logout cannot produce a frame the edge refuses. */
const CLEAR_KEYS_PER_EVENT = 1_000;
const QR_WAIT_MS = 15_000;
const LOGOUT_TIMEOUT_MS = 5_000;

const PairArgs = z.object({
  phoneNumber: z.string().regex(/^\d{8,15}$/, "phoneNumber must be 8-15 digits, country code first"),
});
const DisconnectArgs = z.object({ code: z.number().int().min(0).max(9999) });

function isRegistered(creds: Json): boolean {
  return typeof creds === "object" && creds !== null && !Array.isArray(creds) && creds.registered === true;
}

function ok(data?: Json): Outcome {
  return data === undefined ? { ok: true } : { ok: true, data };
}

function fail(error: string): Outcome {
  return { ok: false, error: error.slice(0, 1024) };
}

export class SessionRunner {
  readonly sessionId: string;
  private readonly link: ReconnectingSocket;
  private readonly events: EventQueue;
  private readonly log: Log;

  // ── Edge link ──
  private epoch: number | null = null;
  private welcomed = false;
  private gone = false;
  /** Links in a row that ended in 4400; while > 0, a welcome does not count as a healthy link. */
  private refusedLinks = 0;
  private heldResults: ResultBody[] = [];
  private readonly answered = new Map<string, ResultBody>();
  private readonly inFlight = new Set<string>();

  // ── WhatsApp ──
  /** The bridge's copy of the auth state: seeded by the first welcome, then every write applied. */
  private auth: AuthState = { creds: null, keys: {} };
  private socket: WhatsAppSocket | null = null;
  /** Bumped whenever the current socket is abandoned, so a late callback from it is ignored. */
  private generation = 0;
  /** Auth writes from sockets up to this generation arrive after a logout cleared the creds: dropped. */
  private authClearedAt = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private whatsappAttempt = 0;
  private badSessionRetries = 0;
  /** Reached stopped / logged_out / failed: WhatsApp stays closed until a `start` command. */
  private halted = false;
  private qrShowing = false;
  private qrWaiters: Array<(showing: boolean) => void> = [];

  constructor(private readonly options: SessionRunnerOptions) {
    this.sessionId = options.sessionId;
    const sid = options.sessionId;
    this.log = (level, msg, fields) => options.log(level, msg, { session: sid, ...fields });
    this.events = new EventQueue(
      ({ seq, event }) => this.sendFrame({ type: "event", epoch: this.epoch ?? 1, seq, event }),
      () => this.welcomed,
    );
    this.link = new ReconnectingSocket({
      url: `${options.edgeUrl}/bridge/v1/sessions/${encodeURIComponent(sid)}?bridge=${encodeURIComponent(options.bridgeId)}`,
      token: options.token,
      backoff: options.linkBackoff ?? LINK_BACKOFF,
      ...(options.slowRetryMs ? { slowRetryMs: options.slowRetryMs } : {}),
      onOpen: () => this.log("debug", "session link open"),
      onMessage: (text) => this.onFrame(text),
      onClose: (close) => this.onLinkClosed(close),
      onError: (error) => this.log("debug", "session link error", { error: error.message }),
    });
  }

  start(): void {
    this.link.start();
  }

  /**
   * Lets the session go on the edge's word (unassign) or at shutdown (1001, so the edge reassigns at
   * once): WhatsApp closes WITHOUT logging out, so the next holder reconnects on the same creds.
   */
  async stop(code: number, reason: string): Promise<void> {
    this.gone = true;
    this.closeWhatsApp();
    this.events.rejectAll(new Error("session left this bridge"));
    await this.link.close(code, reason);
  }

  // ── Edge link ───────────────────────────────────────────────────────────────────────────────

  private onFrame(text: string): void {
    const frame = parseFrame(SessionToBridgeSchema, text);
    if (!frame) {
      this.log("warn", "ignored a frame outside the protocol", { bytes: text.length });
      return;
    }
    try {
      if (frame.type === "welcome") this.onWelcome(frame);
      else if (!this.welcomed) this.log("warn", "frame before welcome ignored", { type: frame.type });
      else if (frame.type === "ack") {
        this.refusedLinks = 0;
        this.events.acknowledge(frame.seq);
      } else
        this.onCommand(frame).catch((error: unknown) =>
          this.log("error", "command handling failed", { command: frame.name, error: errorMessage(error) }),
        );
    } catch (error) {
      this.log("error", "session frame handler failed", { type: frame.type, error: errorMessage(error) });
    }
  }

  private onWelcome(welcome: WelcomeFrame): void {
    const firstLease = this.epoch === null;
    if (this.epoch === welcome.epoch) {
      // Same lease: the edge kept what it stored; only the rest is sent again.
      this.events.acknowledge(welcome.lastSeq);
    } else {
      this.startLease(welcome, firstLease);
    }
    // Adopt the edge's auth unless this bridge's copy is ahead of it: a live socket (its writes are
    // the newest) or writes still on their way.
    if (firstLease || (!this.socket && this.events.pending === 0)) this.auth = welcome.auth;

    this.welcomed = true;
    // After a 4400 a welcome proves nothing if the refused frame is about to be replayed: resetting
    // here would turn a poisoned frame into a tight reconnect loop. An ack proves health instead.
    if (this.refusedLinks === 0 || this.events.pending === 0) {
      this.refusedLinks = 0;
      this.link.resetBackoff();
    }
    this.log("info", "session link welcomed", {
      epoch: welcome.epoch,
      desired: welcome.desired,
      replaying: this.events.pending,
    });
    this.events.replay();
    const held = this.heldResults;
    this.heldResults = [];
    for (const result of held) this.sendResult(result);

    if (welcome.desired === "running") {
      if (!this.socket && !this.retryTimer && !this.halted) this.openWhatsApp();
    } else {
      // Stopped while the link was down, or assigned as stopped: hold the link, keep WhatsApp closed.
      const wasOpen = this.socket !== null || this.retryTimer !== null;
      this.closeWhatsApp();
      this.halted = true;
      if (wasOpen)
        this.events.push({
          kind: "disconnected",
          code: NO_WHATSAPP_CODE,
          reason: "stopped",
          next: "stopped",
        });
    }
  }

  /**
   * A new lease (epoch): the old queue belonged to the old lease and the edge would refuse its epoch.
   * Numbering restarts after what the new lease has stored. Auth writes of a socket that is still
   * open are true of the account and someone is waiting for them to be durable: they are sent again
   * under the new lease. Anything else of the old lease is dropped.
   */
  private startLease(welcome: WelcomeFrame, firstLease: boolean): void {
    const old = this.events.restart(welcome.lastSeq);
    this.epoch = welcome.epoch;
    this.heldResults = [];
    if (!firstLease) this.log("warn", "lease epoch changed", { epoch: welcome.epoch, dropped: old.length });
    for (const entry of old) {
      if (entry.event?.kind === "auth" && this.socket) {
        const again = this.events.push(entry.event);
        again.waiters = entry.waiters;
      } else {
        for (const waiter of entry.waiters ?? [])
          waiter.reject(new Error("lease changed before the write was stored"));
      }
    }
  }

  private onLinkClosed(close: LinkClose): AfterClose {
    this.welcomed = false;
    if (this.gone) return "stop";
    const fields = { code: close.code, reason: close.reason, http: close.httpStatus };
    switch (close.httpStatus) {
      case 409:
        this.leave(true, "another bridge holds the lease", fields);
        return "stop";
      case 404:
      case 410:
        this.leave(true, "the edge does not know this session", fields);
        return "stop";
      case 401:
      case 403:
        this.log("error", "EDGE REFUSED THE BRIDGE TOKEN: check BRIDGE_TOKEN; retrying slowly", fields);
        return "retry-slowly";
    }
    if (close.code === CLOSE.LEASE_LOST || close.code === CLOSE.RELEASED) {
      this.leave(false, close.code === CLOSE.LEASE_LOST ? "lease lost" : "released by the edge", fields);
      return "stop";
    }
    if (close.code === CLOSE.BAD_FRAME) {
      this.refusedLinks++;
      this.log("warn", "edge refused a frame; reconnecting", { ...fields, inARow: this.refusedLinks });
    } else this.log("info", "session link down; reconnecting, WhatsApp stays open", fields);
    return "retry";
  }

  /** The session leaves this bridge on its own account (not an unassign). */
  private leave(release: boolean, why: string, fields: Record<string, string | number | null>): void {
    this.log("warn", `dropping session: ${why}`, fields);
    this.gone = true;
    this.closeWhatsApp();
    this.events.rejectAll(new Error("session left this bridge"));
    void this.link.close(1000, why);
    this.options.onGone(this.sessionId, release);
  }

  private sendFrame(frame: BridgeToSession): void {
    this.link.send(JSON.stringify(frame));
  }

  private sendResult(result: ResultBody): void {
    if (this.welcomed && this.link.isOpen && this.epoch !== null) {
      this.sendFrame({ type: "result", epoch: this.epoch, ...result });
    } else if (this.heldResults.length < MAX_HELD_RESULTS) {
      this.heldResults.push(result);
    }
  }

  // ── Commands ────────────────────────────────────────────────────────────────────────────────

  private async onCommand(command: CommandFrame): Promise<void> {
    if (command.deadline < Date.now()) {
      this.log("info", "command past its deadline ignored", { command: command.name, id: command.id });
      return;
    }
    const earlier = this.answered.get(command.id);
    if (earlier) return this.sendResult(earlier);
    if (this.inFlight.has(command.id)) return; // delivered again while running: one result only
    this.inFlight.add(command.id);
    let outcome: Outcome;
    try {
      outcome = await this.execute(command);
    } catch (error) {
      outcome = fail(errorMessage(error));
    }
    this.inFlight.delete(command.id);
    const result: ResultBody = { id: command.id, ...outcome };
    this.answered.set(command.id, result);
    if (this.answered.size > REMEMBERED_RESULTS) {
      const oldest = this.answered.keys().next();
      if (!oldest.done) this.answered.delete(oldest.value);
    }
    this.log(outcome.ok ? "info" : "warn", "command answered", {
      command: command.name,
      id: command.id,
      ok: outcome.ok,
      ...(outcome.ok ? {} : { error: outcome.error }),
    });
    if (!this.gone) this.sendResult(result);
  }

  private async execute(command: CommandFrame): Promise<Outcome> {
    switch (command.name) {
      case "start":
        this.halted = false;
        if (!this.socket) this.openWhatsApp();
        return ok();
      case "stop":
        this.closeWhatsApp();
        this.halted = true;
        this.events.push({
          kind: "disconnected",
          code: NO_WHATSAPP_CODE,
          reason: "stopped",
          next: "stopped",
        });
        return ok();
      case "logout":
        await this.logout();
        return ok();
      case "pair":
        return this.pair(command.args);
      case "sim.scan":
      case "sim.disconnect":
        return this.simulate(command);
    }
  }

  private async logout(): Promise<void> {
    this.clearRetry();
    this.halted = true;
    const socket = this.socket;
    // Abandon the socket first: its own 401 close must not run the policy a second time.
    this.generation++;
    this.socket = null;
    this.qrShown(false);
    if (socket) {
      let timer: NodeJS.Timeout | undefined;
      try {
        // Unlinks the device on the phone; if WhatsApp does not answer, the creds are still cleared.
        await Promise.race([
          socket.logout(),
          new Promise((resolve) => {
            timer = setTimeout(resolve, LOGOUT_TIMEOUT_MS);
          }),
        ]);
      } catch (error) {
        this.log("warn", "WhatsApp logout failed; clearing creds anyway", { error: errorMessage(error) });
      } finally {
        clearTimeout(timer);
        socket.close();
      }
    }
    this.clearAuth();
    this.events.push({ kind: "disconnected", code: 401, reason: "logged out", next: "logged_out" });
  }

  private async pair(args: Record<string, Json>): Promise<Outcome> {
    const parsed = PairArgs.safeParse(args);
    if (!parsed.success) return fail(parsed.error.issues[0]?.message ?? "bad arguments");
    if (isRegistered(this.auth.creds)) return fail("already paired: log out first");
    if (!this.socket) return fail("WhatsApp is not connected: start the session first");
    // Baileys can only ask for a code once the socket is up, which the first QR proves.
    if (!(await this.waitForQr())) return fail("WhatsApp is not ready for pairing");
    const socket = this.socket;
    if (!socket) return fail("WhatsApp closed before pairing");
    return ok({ code: await socket.requestPairingCode(parsed.data.phoneNumber) });
  }

  private simulate(command: CommandFrame): Outcome {
    const socket = this.socket;
    if (!this.options.network.simulated) return fail("simulator only");
    if (!socket?.simulate) return fail("WhatsApp is not connected: start the session first");
    if (command.name === "sim.scan") {
      socket.simulate.scan();
      return ok();
    }
    const parsed = DisconnectArgs.safeParse(command.args);
    if (!parsed.success) return fail("code must be an integer");
    socket.simulate.disconnect(parsed.data.code);
    return ok();
  }

  private waitForQr(): Promise<boolean> {
    if (this.qrShowing) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.qrWaiters = this.qrWaiters.filter((waiter) => waiter !== done);
        resolve(false);
      }, QR_WAIT_MS);
      const done = (showing: boolean) => {
        clearTimeout(timer);
        resolve(showing);
      };
      this.qrWaiters.push(done);
    });
  }

  private qrShown(showing: boolean): void {
    this.qrShowing = showing;
    const waiters = this.qrWaiters;
    this.qrWaiters = [];
    for (const waiter of waiters) waiter(showing);
  }

  // ── WhatsApp ────────────────────────────────────────────────────────────────────────────────

  private openWhatsApp(): void {
    if (this.socket || this.gone) return;
    this.clearRetry();
    const generation = ++this.generation;
    const current = () => generation === this.generation;
    const handlers: SocketHandlers = {
      onQr: (qr) => {
        if (current()) this.onQr(qr);
      },
      onConnecting: () => {
        if (current()) this.events.push({ kind: "connecting" });
      },
      onOpen: (me) => {
        if (current()) this.onWhatsAppOpen(me);
      },
      onClose: (info) => {
        if (current()) this.onWhatsAppClosed(info);
      },
      persistAuth: (update) => this.persistAuth(generation, update),
    };
    try {
      const socket = this.options.network.open({ sessionId: this.sessionId, auth: this.auth, handlers });
      if (current()) this.socket = socket;
      this.log("info", "whatsapp opening", { registered: isRegistered(this.auth.creds) });
    } catch (error) {
      this.generation++;
      this.halted = true;
      this.log("error", "whatsapp socket could not be created", { error: errorMessage(error) });
      this.events.push({
        kind: "disconnected",
        code: 500,
        reason: errorMessage(error).slice(0, 512),
        next: "failed",
      });
    }
  }

  private onQr(qr: string): void {
    if (qr.length > 1024) {
      this.log("error", "QR longer than the protocol allows; not sent", { length: qr.length });
      return;
    }
    this.qrShown(true);
    this.log("info", "whatsapp qr");
    // Reserve the slot now so the QR keeps its place among events that follow while it renders.
    const entry = this.events.push(null);
    toDataURL(qr, { margin: 2 }).then(
      (image) => this.events.fill(entry, { kind: "qr", qr, image }),
      (error: unknown) => {
        this.log("error", "QR rendering failed", { error: errorMessage(error) });
        // The slot must still be filled or every later event would wait behind it.
        this.events.fill(entry, { kind: "connecting" });
      },
    );
  }

  private onWhatsAppOpen(me: Me): void {
    this.whatsappAttempt = 0;
    this.badSessionRetries = 0;
    this.qrShown(false);
    this.log("info", "whatsapp connected");
    this.events.push({ kind: "connected", me });
  }

  private onWhatsAppClosed(info: CloseInfo): void {
    this.generation++;
    this.socket = null;
    this.qrShown(false);
    const decision = decideReconnect(info, { badSessionRetries: this.badSessionRetries });
    this.log(decision.next === "reconnecting" ? "info" : "warn", "whatsapp closed", {
      code: info.code,
      reason: info.reason,
      next: decision.next,
    });
    if (decision.next === "logged_out") this.clearAuth();
    this.events.push({ kind: "disconnected", code: info.code, reason: decision.reason, next: decision.next });
    if (decision.next !== "reconnecting") {
      this.halted = true;
      return;
    }
    if (info.code === 500) this.badSessionRetries++;
    const delay =
      decision.delay === "immediate"
        ? 0
        : backoffDelay(this.whatsappAttempt++, this.options.whatsappBackoff ?? WHATSAPP_BACKOFF);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.openWhatsApp();
    }, delay);
  }

  private closeWhatsApp(): void {
    this.clearRetry();
    this.generation++;
    this.qrShown(false);
    const socket = this.socket;
    this.socket = null;
    socket?.close();
  }

  private clearRetry(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  // ── Auth write-through ──────────────────────────────────────────────────────────────────────

  private persistAuth(generation: number, update: AuthUpdate): Promise<void> {
    if (this.gone) return Promise.reject(new Error("session left this bridge"));
    // A socket abandoned before a logout must not write the dead creds back.
    if (generation <= this.authClearedAt) return Promise.resolve();
    if (update.creds !== undefined) this.auth.creds = update.creds;
    for (const [key, value] of Object.entries(update.keys ?? {})) {
      if (value === null) delete this.auth.keys[key];
      else this.auth.keys[key] = value;
    }
    const event: SessionEvent = { kind: "auth" };
    if (update.creds !== undefined) event.creds = update.creds;
    if (update.keys) event.keys = update.keys;
    return this.events.durable(this.events.push(event));
  }

  /** Logged out: the creds are dead, and so is every key that was negotiated with them. */
  private clearAuth(): void {
    this.authClearedAt = this.generation;
    const keys = Object.keys(this.auth.keys);
    this.auth = { creds: null, keys: {} };
    let first = true;
    for (let start = 0; first || start < keys.length; start += CLEAR_KEYS_PER_EVENT) {
      const cleared: Record<string, Json> = {};
      for (const key of keys.slice(start, start + CLEAR_KEYS_PER_EVENT)) cleared[key] = null;
      this.events.push(
        first ? { kind: "auth", creds: null, keys: cleared } : { kind: "auth", keys: cleared },
      );
      first = false;
    }
  }
}
