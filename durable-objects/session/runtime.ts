import {
  BridgeToSessionSchema,
  CLOSE,
  type CommandName,
  LIFECYCLE_KINDS,
  type LifecycleEvent,
  parseFrame,
  type SessionEvent,
  type SessionToBridge,
} from "../../bridge/src/protocol/link";
import type { NetworkEvent } from "../../bridge/src/protocol/messaging";
import { ownerTagOf } from "../../workers/auth/live-sockets";
import type { Env } from "../../workers/core/env";
import { fleetObject } from "../fleet/contract";
import type { SessionConfigCopy } from "../messaging/config/session";
import { failure, type Outcome } from "../messaging/context";
import { acceptEventStream } from "../messaging/events/stream";
import { deleteAllMedia } from "../messaging/media/retention";
import type { StoredMedia } from "../messaging/media/store";
import { sentRecord } from "../messaging/messages/sent-record";
import type { WebhookEndpoint } from "../messaging/webhooks/types";
import { answerHeartbeats, staleAfterMs } from "../shared/link-liveness";
import { BridgeCommands, commandTimeoutMs, failureStatusOf, pairingCodeOf } from "./bridge-commands";
import * as links from "./bridge-links";
import type { SessionObject, SessionSnapshot } from "./contract";
import { applyEvent, QR_COMING_STATES, RESTING_STATES } from "./lifecycle";
import { SessionMessaging } from "./messaging";
import { mirrorToDirectory, stateChanged } from "./mirror";
import { SessionProxy, type StoredProxy } from "./proxy";
import { snapshotOf } from "./snapshot";
import { type SessionRecord, SessionStorage } from "./storage";
import { SessionViewers } from "./viewers";

/**
 * What a messaging session's Durable Object does (SessionDO is its shell): the lifecycle, current
 * QR, the lease that lets exactly one bridge hold its WhatsApp socket, the Baileys auth state, and
 * the event cursor. Every bridge frame is validated; events are applied once (by seq) and
 * acknowledged after they are stored: the output gate holds the ack until the write is durable.
 * See docs/sessions.md for the lifecycle and the protocol.
 */
export class SessionRuntime implements Omit<SessionObject, keyof Rpc.DurableObjectBranded> {
  private storage: SessionStorage;
  private readonly commands = new BridgeCommands();
  private messaging: SessionMessaging;
  private readonly viewers: SessionViewers;
  private proxy: SessionProxy;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
  ) {
    this.storage = new SessionStorage(ctx.storage.sql);
    this.messaging = this.createMessaging();
    this.viewers = new SessionViewers(ctx, () => this.storage.read());
    this.proxy = new SessionProxy(ctx.storage.sql, env);
    answerHeartbeats(ctx);
  }

  private createMessaging(): SessionMessaging {
    return new SessionMessaging({
      state: this.ctx,
      env: this.env,
      sessionId: () => this.storage.read().sessionId ?? "",
      isConnected: () => this.storage.read().state === "connected" && this.liveLink() !== null,
      runOperation: (operation, transfer) => this.command("wa", operation, commandTimeoutMs(transfer?.bytes)),
    });
  }

  // ── Messaging RPC from the Worker (handlers in session/api.ts) ─────────────────────────────

  /** Runs a named messaging handler; the Worker calls it through `callSession` (typed). */
  async call(sessionId: string, name: string, input: unknown): Promise<Outcome<unknown>> {
    this.bind(sessionId);
    return this.messaging.call(name, input);
  }

  /** The Worker pushes settings and bot configuration here whenever they change. */
  async configure(sessionId: string, copy: SessionConfigCopy): Promise<void> {
    this.bind(sessionId);
    this.messaging.configure(copy);
  }

  /** The Worker pushes the session's webhook endpoints here whenever they change. */
  async setWebhooks(sessionId: string, endpoints: WebhookEndpoint[]): Promise<void> {
    this.bind(sessionId);
    await this.messaging.setWebhooks(endpoints);
  }

  async leaseHolder(sessionId: string): Promise<string | null> {
    this.bind(sessionId);
    return this.storage.read().leaseBridge;
  }

  /** What the lease holder moves over HTTP: uploads to send, downloads, own messages to resend. */
  async media(sessionId: string, ref: string): Promise<StoredMedia | null> {
    this.bind(sessionId);
    return this.messaging.media(ref);
  }
  async sentMessage(sessionId: string, messageId: string): Promise<string | null> {
    this.bind(sessionId);
    return sentRecord(this.ctx.storage.sql, messageId);
  }

  /** Drives the simulated world (only routed when SIMULATOR=1). */
  async simulateWorld(sessionId: string, args: Record<string, unknown>): Promise<Outcome<unknown>> {
    this.bind(sessionId);
    return this.command("sim", args);
  }

  async alarm(): Promise<void> {
    await this.messaging.alarm();
  }

  // ── RPC from the Worker ────────────────────────────────────────────────────────────────────

  async snapshot(sessionId: string): Promise<SessionSnapshot> {
    this.bind(sessionId);
    const live = { proxy: this.proxy.shown(), hasInstance: this.liveLink() !== null };
    return snapshotOf(this.storage.read(), this.ctx.storage.sql, live);
  }

  async awaitQr(sessionId: string, waitMs: number): Promise<SessionSnapshot> {
    this.bind(sessionId);
    const deadline = Date.now() + waitMs;
    for (let left = waitMs; left > 0; left = deadline - Date.now()) {
      const { qr, state } = this.storage.read();
      if (qr || !QR_COMING_STATES.has(state)) break;
      await this.viewers.nextChange(left);
    }
    return this.snapshot(sessionId);
  }

  async start(sessionId: string): Promise<Outcome<SessionSnapshot>> {
    this.bind(sessionId);
    const record = this.storage.read();
    this.storage.write({ desired: "running" });
    const link = this.liveLink();
    if (link) {
      if (!RESTING_STATES.has(record.state) && record.state !== "reconnecting") return this.snapshotOutcome();
      const proxy = await this.proxyForBridge();
      if (!proxy) return this.snapshotOutcome();
      await this.changeState({ state: "starting", lastDisconnect: null });
      const started = await this.command("start", proxy);
      return started.ok ? this.snapshotOutcome() : started;
    }
    // Set before the first await: concurrent starts see it and do not ask the fleet again.
    if (record.assigning) return this.snapshotOutcome();
    this.storage.write({ assigning: true });
    try {
      if (RESTING_STATES.has(record.state))
        await this.changeState({ state: "starting", lastDisconnect: null });
      await fleetObject(this.env).assign(sessionId);
    } finally {
      this.storage.write({ assigning: false });
    }
    return this.snapshotOutcome();
  }

  async stop(sessionId: string): Promise<Outcome<SessionSnapshot>> {
    this.bind(sessionId);
    this.storage.write({ desired: "stopped" });
    if (this.liveLink()) await this.command("stop", {});
    await this.release();
    await this.changeState({ state: "stopped", qr: null, qrImage: null, connectedAt: null });
    return this.snapshotOutcome();
  }

  /** A new proxy (or none) applies at once: a running session reconnects through it. */
  async setProxy(sessionId: string, proxy: StoredProxy | null): Promise<Outcome<SessionSnapshot>> {
    this.bind(sessionId);
    this.proxy.save(proxy);
    return this.storage.read().desired === "running" ? this.restart(sessionId) : this.snapshotOutcome();
  }

  async restart(sessionId: string): Promise<Outcome<SessionSnapshot>> {
    await this.stop(sessionId);
    return this.start(sessionId);
  }

  /** Unlinks the device. Without a live bridge the credentials are still discarded here. */
  async logout(sessionId: string): Promise<Outcome<SessionSnapshot>> {
    this.bind(sessionId);
    this.storage.write({ desired: "stopped" });
    if (this.liveLink()) await this.command("logout", {});
    this.storage.clearAuth();
    await this.release();
    await this.changeState({ state: "logged_out", qr: null, qrImage: null, me: null, connectedAt: null });
    return this.snapshotOutcome();
  }

  async pair(sessionId: string, phoneNumber: string): Promise<Outcome<{ pairingCode: string }>> {
    this.bind(sessionId);
    if (this.storage.read().state === "connected")
      return { ok: false, status: 400, error: "Already connected" };
    return pairingCodeOf(await this.command("pair", { phoneNumber }));
  }

  /** Drives the simulated WhatsApp network (only routed when SIMULATOR=1). */
  async simulate(
    sessionId: string,
    name: "sim.scan" | "sim.disconnect",
    code?: number,
  ): Promise<Outcome<unknown>> {
    this.bind(sessionId);
    return this.command(name, code === undefined ? {} : { code });
  }

  /** Logs out if possible and erases every trace of the session in this object. */
  async destroy(sessionId: string): Promise<void> {
    this.bind(sessionId);
    if (this.liveLink()) await this.command("logout", {});
    await this.release();
    this.viewers.closeAll("session deleted");
    await this.ctx.storage.deleteAlarm();
    await deleteAllMedia(this.env, sessionId);
    await this.ctx.storage.deleteAll();
    this.storage = new SessionStorage(this.ctx.storage.sql);
    this.proxy = new SessionProxy(this.ctx.storage.sql, this.env);
    this.messaging = this.createMessaging();
  }

  // ── RPC from the BridgeFleet ───────────────────────────────────────────────────────────────

  /** Hands the session to `bridge` under a new epoch; any other bridge's link is cut. */
  async grantLease(sessionId: string, bridge: string): Promise<number> {
    this.bind(sessionId);
    const record = this.storage.read();
    const epoch = record.leaseEpoch + 1;
    this.storage.write({ leaseBridge: bridge, leaseEpoch: epoch, lastSeq: 0, stateBeforeLinkLoss: null });
    links.closeAllLinks(this.ctx, CLOSE.LEASE_LOST, "lease moved to another bridge");
    if (record.desired === "running" && !RESTING_STATES.has(record.state)) {
      await this.changeState({ state: this.storage.hasCreds() ? "reconnecting" : "starting" });
    }
    return epoch;
  }

  /** No bridge can hold the session right now; it waits for one. */
  async revokeLease(sessionId: string): Promise<void> {
    this.bind(sessionId);
    this.storage.write({ leaseBridge: null });
    links.closeAllLinks(this.ctx, CLOSE.LEASE_LOST, "lease revoked");
    const record = this.storage.read();
    if (record.desired === "running" && record.state !== "starting")
      await this.changeState({ state: "reconnecting" });
  }

  // ── The bridge's session socket ────────────────────────────────────────────────────────────

  /**
   * WebSocket upgrade from a bridge (the Worker has already checked its token), or from a dashboard
   * viewer at `/watch/<id>` or an event stream at `/events-stream/<id>` (the Worker checked the caller).
   */
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    this.bind(decodeURIComponent(url.pathname.split("/").pop() ?? ""));
    if (url.pathname.startsWith("/watch/")) return this.viewers.accept(ownerTagOf(request.url));
    if (url.pathname.startsWith("/events-stream/"))
      return acceptEventStream(this.ctx, this.storage.read().sessionId ?? "", request.url);
    const bridge = url.searchParams.get("bridge") ?? "";
    const proxy = await this.proxyForBridge();
    const record = this.storage.read();
    if (!record.leaseBridge || record.leaseBridge !== bridge) {
      return new Response("Another bridge holds this session, or none is assigned", { status: 409 });
    }
    const opened = links.openBridgeLink(this.ctx, bridge, record.leaseEpoch, staleAfterMs(this.env));
    if ("refused" in opened) return opened.refused;
    const { client, server } = opened;
    this.send(server, links.welcomeFrame(record, this.storage.readAuth(), proxy ? proxy.proxy : undefined));
    if (record.stateBeforeLinkLoss && record.state === "reconnecting") {
      await this.changeState({ state: record.stateBeforeLinkLoss, stateBeforeLinkLoss: null });
    }
    await this.messaging.resume();
    return new Response(null, { status: 101, webSocket: client });
  }

  async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    if (links.isViewer(ws)) return; // viewers only listen
    const text = typeof message === "string" ? message : new TextDecoder().decode(message);
    const frame = parseFrame(BridgeToSessionSchema, text);
    const record = this.storage.read();
    const link = ws.deserializeAttachment() as links.LinkAttachment | null;
    if (!frame || !link || link.epoch !== record.leaseEpoch || frame.epoch !== record.leaseEpoch) {
      ws.close(CLOSE.BAD_FRAME, frame ? "stale epoch" : "invalid frame");
      return;
    }
    if (frame.type === "result") {
      this.commands.settle(
        frame.id,
        frame.ok
          ? { ok: true, data: frame.data ?? null }
          : failure(failureStatusOf(frame.status, 503), frame.error ?? "failed"),
      );
      return;
    }
    if (frame.seq <= record.lastSeq) {
      this.send(ws, { type: "ack", seq: frame.seq }); // a replay of something already applied
      return;
    }
    await this.applyBridgeEvent(record, frame.event, frame.seq, ws);
  }

  async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    try {
      ws.close(code, reason); // reciprocate, or the bridge sees 1006 under hibernation
    } catch {
      // already closed
    }
    if (!links.isViewer(ws)) await this.onLinkLost(ws);
  }

  async webSocketError(ws: WebSocket): Promise<void> {
    if (!links.isViewer(ws)) await this.onLinkLost(ws);
  }

  // ── internals ──────────────────────────────────────────────────────────────────────────────

  private async applyBridgeEvent(record: SessionRecord, event: SessionEvent, seq: number, ws: WebSocket) {
    if (!LIFECYCLE_KINDS.has(event.kind)) {
      const followUps = await this.messaging.apply(event as NetworkEvent);
      this.storage.write({ lastSeq: seq, stateBeforeLinkLoss: null });
      this.send(ws, { type: "ack", seq });
      this.messaging.runFollowUps(followUps);
      return;
    }
    const patch = applyEvent(record, event as LifecycleEvent, Date.now());
    this.storage.keepFrom(event as LifecycleEvent);
    if (patch.state === "logged_out") this.storage.clearAuth();
    this.storage.write({ ...patch, lastSeq: seq, stateBeforeLinkLoss: null });
    this.messaging.connectionChanged(record, this.storage.read());
    this.send(ws, { type: "ack", seq }); // held by the output gate until the writes above are durable
    this.viewers.tell();
    if (patch.state !== undefined) await stateChanged(this.env, record, this.storage.read(), this.keepAlive);
    if (patch.state !== undefined && RESTING_STATES.has(patch.state)) await this.release();
  }

  private async onLinkLost(ws: WebSocket): Promise<void> {
    const link = ws.deserializeAttachment() as links.LinkAttachment | null;
    const record = this.storage.read();
    if (!link || link.epoch !== record.leaseEpoch || this.liveLink(ws)) return;
    this.commands.failAll("The bridge link dropped");
    if (
      record.desired === "running" &&
      !RESTING_STATES.has(record.state) &&
      record.state !== "reconnecting"
    ) {
      await this.changeState({ state: "reconnecting", stateBeforeLinkLoss: record.state });
    }
  }

  /** The open link of the current lease holder (ignoring `except`, a socket that is closing). */
  private liveLink(except?: WebSocket): WebSocket | null {
    const { leaseBridge, leaseEpoch } = this.storage.read();
    return links.findLiveLink(this.ctx, leaseBridge, leaseEpoch, staleAfterMs(this.env), except);
  }

  private command(name: CommandName, args: object, timeoutMs?: number): Promise<Outcome<unknown>> {
    return this.commands.send(this.liveLink(), name, args as Record<string, unknown>, timeoutMs);
  }

  /** Gives the session back to the fleet and cuts the link: nothing runs until the next start. */
  private async release(): Promise<void> {
    const { sessionId } = this.storage.read();
    this.storage.write({ leaseBridge: null, stateBeforeLinkLoss: null });
    links.closeAllLinks(this.ctx, CLOSE.RELEASED, "session released");
    if (sessionId) await fleetObject(this.env).release(sessionId);
  }

  private readonly keepAlive = (promise: Promise<unknown>) => this.ctx.waitUntil(promise);
  private async changeState(patch: Partial<SessionRecord>): Promise<void> {
    const before = this.storage.read();
    this.storage.write(patch);
    this.messaging.connectionChanged(before, this.storage.read());
    this.viewers.tell();
    await mirrorToDirectory(this.env.DB, this.storage.read());
  }

  private proxyForBridge(): Promise<{ proxy: string | null } | null> {
    return this.proxy.forBridge(this.storage.read().sessionId ?? "", (why) =>
      this.changeState({ desired: "stopped", state: "failed", lastDisconnect: why }),
    );
  }

  private snapshotOutcome(): Promise<Outcome<SessionSnapshot>> {
    const { sessionId } = this.storage.read();
    return this.snapshot(sessionId ?? "").then((data) => ({ ok: true as const, data }));
  }

  private send(ws: WebSocket, frame: SessionToBridge): void {
    ws.send(JSON.stringify(frame));
  }

  /** Records which session this object is, the first time anyone names it. */
  private bind(sessionId: string): void {
    if (sessionId && !this.storage.read().sessionId) this.storage.write({ sessionId });
  }
}
