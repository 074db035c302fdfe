/**
 * The life of one session's WhatsApp socket through the seam: opening it with the session's auth
 * state, QR codes, the reconnect policy on every close, logout, pairing and the simulator's
 * controls. Everything it learns (lifecycle and network events alike) goes to the edge as events on the
 * session's queue; auth writes resolve only once the edge has stored them.
 *
 * Independent of the edge link on purpose (see session-runner.ts): a blip there must not touch this.
 */
import { toDataURL } from "qrcode";
import { z } from "zod";
import type { AuthState, Me } from "../protocol/link.ts";
import { type NetworkEvent, NetworkEventSchema } from "../protocol/messaging.ts";
import { ProxyUrlSchema } from "../protocol/proxy.ts";
import {
  type AuthUpdate,
  type CloseInfo,
  type Json,
  OperationError,
  type SocketHandlers,
  type WhatsAppNetwork,
  type WhatsAppSocket,
} from "../protocol/seam.ts";
import { type Backoff, backoffDelay } from "../shared/backoff.ts";
import { errorMessage, type Log } from "../shared/log.ts";
import { applyAuthUpdate, authClearingEvents, isRegistered } from "./auth-copy.ts";
import { type CommandFrame, fail, type Outcome, ok } from "./command-ledger.ts";
import type { EventQueue } from "./event-queue.ts";
import { QrGate } from "./qr-gate.ts";
import { decideReconnect } from "./reconnect-policy.ts";

export interface WhatsAppConnectionOptions {
  sessionId: string;
  network: WhatsAppNetwork;
  backoff: Backoff;
  log: Log;
  /** The session's event queue to the edge (shared with the link, which numbers and sends them). */
  events: EventQueue;
  /** The session left this bridge: no socket may open and no write may start. */
  isGone(): boolean;
  /** The edge's record of a message this account sent (for resend requests), or null. */
  sentMessage?(chat: string, id: string): Promise<Json | null>;
}

/** `disconnected.code` when the bridge closed WhatsApp itself (stop): WhatsApp gave no code. */
export const NO_WHATSAPP_CODE = 0;
const QR_WAIT_MS = 15_000;
const LOGOUT_TIMEOUT_MS = 5_000;

const PairArgs = z.object({
  phoneNumber: z.string().regex(/^\d{8,15}$/, "phoneNumber must be 8-15 digits, country code first"),
});
/** The edge sends the session's proxy with each start, so a changed proxy applies on restart. */
const StartArgs = z.object({ proxy: ProxyUrlSchema.nullable().optional() });
const DisconnectArgs = z.object({ code: z.number().int().min(0).max(9999) });

export class WhatsAppConnection {
  /** The bridge's copy of the auth state: seeded by the first welcome, then every write applied. */
  auth: AuthState = { creds: null, keys: {} };
  private socket: WhatsAppSocket | null = null;
  /** Bumped whenever the current socket is abandoned, so a late callback from it is ignored. */
  private generation = 0;
  /** Auth writes from sockets up to this generation arrive after a logout cleared the creds: dropped. */
  private authClearedAt = 0;
  /** The generation whose socket reported `open`: operations need a connected socket, not a QR. */
  private connectedGeneration = -1;
  private retryTimer: NodeJS.Timeout | null = null;
  private whatsappAttempt = 0;
  private badSessionRetries = 0;
  /** A 405 already read the current version again since the socket last opened: the next one fails. */
  private versionRetried = false;
  /** The WhatsApp Web version that last connected this session (the edge's copy, from the welcome). */
  lastGoodVersion: [number, number, number] | null = null;
  /** The session's proxy as the edge last gave it (welcome, start); a secret: never logged. */
  proxy: string | null = null;
  /** Reached stopped / logged_out / failed: WhatsApp stays closed until `start`. */
  private halted = false;
  private readonly qr = new QrGate();

  private readonly events: EventQueue;
  private readonly log: Log;

  constructor(private readonly options: WhatsAppConnectionOptions) {
    this.events = options.events;
    this.log = options.log;
  }

  /** A socket is open (its writes are the newest truth about the account). */
  get isOpen(): boolean {
    return this.socket !== null;
  }

  /** The socket while WhatsApp is connected (opened and not closed since), else null. */
  get connectedSocket(): WhatsAppSocket | null {
    return this.connectedGeneration === this.generation ? this.socket : null;
  }

  /** The `start` command: WhatsApp may run again, and opens now unless it already is. */
  start(args: Record<string, unknown> = {}): void {
    const proxy = StartArgs.safeParse(args);
    if (proxy.success && proxy.data.proxy !== undefined) this.proxy = proxy.data.proxy;
    this.halted = false;
    if (!this.socket) this.open();
  }

  /** The edge wants the session running: open unless open, about to retry, or halted by a decision. */
  openIfDue(): void {
    if (!this.socket && !this.retryTimer && !this.halted) this.open();
  }

  /** Stops WhatsApp and keeps it stopped; reports it when something was running (or `always`). */
  halt(always: boolean): void {
    const wasActive = this.socket !== null || this.retryTimer !== null;
    this.close();
    this.halted = true;
    if (always || wasActive) {
      this.events.push({ kind: "disconnected", code: NO_WHATSAPP_CODE, reason: "stopped", next: "stopped" });
    }
  }

  async logout(): Promise<void> {
    this.clearRetry();
    this.halted = true;
    const socket = this.socket;
    // Abandon the socket first: its own 401 close must not run the policy a second time.
    this.generation++;
    this.socket = null;
    this.qr.set(false);
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

  async pair(args: Record<string, unknown>): Promise<Outcome> {
    const parsed = PairArgs.safeParse(args);
    if (!parsed.success) return fail(parsed.error.issues[0]?.message ?? "bad arguments");
    if (isRegistered(this.auth.creds)) return fail("already paired: log out first");
    if (!this.socket) return fail("WhatsApp is not connected: start the session first");
    // Baileys can only ask for a code once the socket is up, which the first QR proves.
    if (!(await this.qr.wait(QR_WAIT_MS))) return fail("WhatsApp is not ready for pairing");
    const socket = this.socket;
    if (!socket) return fail("WhatsApp closed before pairing");
    return ok({ code: await socket.requestPairingCode(parsed.data.phoneNumber) });
  }

  async simulate(command: CommandFrame): Promise<Outcome> {
    const socket = this.socket;
    const sim = command.name === "sim";
    // `sim` is a newer command whose failures carry a status; sim.scan/sim.disconnect answer as before.
    if (!this.options.network.simulated) return fail("simulator only", sim ? 400 : undefined);
    if (!socket?.simulate) {
      return fail("WhatsApp is not connected: start the session first", sim ? 503 : undefined);
    }
    if (sim) {
      try {
        return ok(await socket.simulate.control(command.args));
      } catch (error) {
        return fail(errorMessage(error), error instanceof OperationError ? error.status : 500);
      }
    }
    if (command.name === "sim.scan") {
      socket.simulate.scan();
      return ok();
    }
    const parsed = DisconnectArgs.safeParse(command.args);
    if (!parsed.success) return fail("code must be an integer");
    socket.simulate.disconnect(parsed.data.code);
    return ok();
  }

  open(): void {
    if (this.socket || this.options.isGone()) return;
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
      onMe: (me) => {
        if (current()) this.events.push({ kind: "me", me });
      },
      onClose: (info) => {
        if (current()) this.onWhatsAppClosed(info);
      },
      persistAuth: (update) => this.persistAuth(generation, update),
      onNetworkEvent: (event) => {
        if (current()) this.onNetworkEvent(event);
      },
      ...(this.options.sentMessage ? { storedMessage: this.options.sentMessage } : {}),
    };
    try {
      const socket = this.options.network.open({
        sessionId: this.options.sessionId,
        auth: this.auth,
        handlers,
        lastGoodVersion: this.lastGoodVersion,
        proxy: this.proxy,
      });
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
    this.qr.set(true);
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
    this.connectedGeneration = this.generation;
    this.whatsappAttempt = 0;
    this.badSessionRetries = 0;
    this.versionRetried = false;
    this.qr.set(false);
    const version = this.socket?.version;
    if (version) this.lastGoodVersion = version.version;
    this.log("info", "whatsapp connected", version ? { version: version.version.join(".") } : {});
    this.events.push({
      kind: "connected",
      me,
      ...(version ? { waVersion: { version: version.version.join("."), source: version.source } } : {}),
    });
  }

  /**
   * Checked against the protocol before queueing: the edge closes the link on a frame it cannot parse,
   * and a replayed bad event would then refuse every reconnect. One odd message is dropped instead.
   */
  private onNetworkEvent(event: NetworkEvent): void {
    const parsed = NetworkEventSchema.safeParse(event);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      this.log("warn", "network event outside the protocol dropped", {
        kind: event.kind,
        path: issue?.path.join(".") ?? null,
        error: issue?.message ?? null,
      });
      return;
    }
    this.events.push(parsed.data);
  }

  private onWhatsAppClosed(info: CloseInfo): void {
    const announced = this.socket?.version?.version;
    this.generation++;
    this.socket = null;
    this.qr.set(false);
    if (info.code === 405 && this.retryWithCurrentVersion(announced)) return;
    const decision = decideReconnect(info, { badSessionRetries: this.badSessionRetries });
    const retrying = decision.next === "reconnecting" || decision.next === "network_error";
    this.log(decision.next === "reconnecting" ? "info" : "warn", "whatsapp closed", {
      code: info.code,
      reason: info.reason,
      next: decision.next,
    });
    if (decision.next === "logged_out") this.clearAuth();
    this.events.push({ kind: "disconnected", code: info.code, reason: decision.reason, next: decision.next });
    if (!retrying) {
      this.halted = true;
      return;
    }
    if (info.code === 500) this.badSessionRetries++;
    const delay =
      decision.delay === "immediate" ? 0 : backoffDelay(this.whatsappAttempt++, this.options.backoff);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.open();
    }, delay);
  }

  /**
   * WhatsApp refused the announced version: read the current one once and try again with it; only if
   * it did not change (or was tried already) does the session fail as before. False: not retrying.
   */
  private retryWithCurrentVersion(announced: [number, number, number] | undefined): boolean {
    const refresh = this.options.network.refreshVersion;
    if (this.versionRetried || !refresh) return false;
    this.versionRetried = true;
    const generation = this.generation;
    this.log("warn", "whatsapp refused this version; reading the current one");
    this.events.push({
      kind: "disconnected",
      code: 405,
      reason: "WhatsApp refused this client version (405): reading the current version and retrying once",
      next: "reconnecting",
    });
    refresh.call(this.options.network, announced).then(
      (changed) => {
        // Stopped, logged out or reopened meanwhile: this retry is no longer wanted.
        if (generation !== this.generation || this.halted || this.socket) return;
        if (changed) this.open();
        else
          this.onWhatsAppClosed({ code: 405, reason: "version refused", qrExpired: false, loggedOut: false });
      },
      () => undefined,
    );
    return true;
  }

  close(): void {
    this.clearRetry();
    this.generation++;
    this.qr.set(false);
    const socket = this.socket;
    this.socket = null;
    socket?.close();
  }

  private clearRetry(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  private persistAuth(generation: number, update: AuthUpdate): Promise<void> {
    if (this.options.isGone()) return Promise.reject(new Error("session left this bridge"));
    // A socket abandoned before a logout must not write the dead creds back.
    if (generation <= this.authClearedAt) return Promise.resolve();
    return this.events.durable(this.events.push(applyAuthUpdate(this.auth, update)));
  }

  /** Logged out: the creds are dead, and so is every key that was negotiated with them. */
  private clearAuth(): void {
    this.authClearedAt = this.generation;
    const keyIds = Object.keys(this.auth.keys);
    this.auth = { creds: null, keys: {} };
    for (const event of authClearingEvents(keyIds)) this.events.push(event);
  }
}
