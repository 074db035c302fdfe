/**
 * One held session on this bridge: its link to the SessionDO (welcome, events with acks and replay,
 * commands, leases) and the WhatsApp connection it steers (connection.ts).
 *
 * The two connections fail independently on purpose. A blip on the edge link must not drop WhatsApp
 * (events queue up and are replayed), and a WhatsApp drop is reported to the edge as an event.
 */

import { type EdgeMedia, httpOrigin } from "../media/media.ts";
import {
  ALREADY_LINKED,
  type BridgeToSession,
  CLOSE,
  parseFrame,
  type SessionToBridge,
  SessionToBridgeSchema,
} from "../protocol/link.ts";
import type { WhatsAppNetwork } from "../protocol/seam.ts";
import { type Backoff, LINK_BACKOFF, WHATSAPP_BACKOFF } from "../shared/backoff.ts";
import { errorMessage, type Log } from "../shared/log.ts";
import { type AfterClose, type LinkClose, ReconnectingSocket } from "../shared/reconnecting-socket.ts";
import { parseVersionText } from "../whatsapp/version.ts";
import { type CommandFrame, CommandLedger, type Outcome, ok, type ResultBody } from "./command-ledger.ts";
import { WhatsAppConnection } from "./connection.ts";
import { EventQueue } from "./event-queue.ts";
import { runOperation } from "./operation-command.ts";
import { fetchSentMessage } from "./stored-messages.ts";

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

type WelcomeFrame = Extract<SessionToBridge, { type: "welcome" }>;

/** Results that could not be sent while the link was down; sent after a welcome of the same lease. */
const MAX_HELD_RESULTS = 100;

export class SessionRunner {
  readonly sessionId: string;
  private readonly link: ReconnectingSocket;
  private readonly events: EventQueue;
  private readonly whatsapp: WhatsAppConnection;
  private readonly log: Log;
  private readonly ledger: CommandLedger;
  private epoch: number | null = null;
  private welcomed = false;
  private gone = false;
  /** Links in a row that ended in 4400; while > 0, a welcome does not count as a healthy link. */
  private refusedLinks = 0;
  private heldResults: ResultBody[] = [];
  private readonly media: EdgeMedia;

  constructor(private readonly options: SessionRunnerOptions) {
    this.sessionId = options.sessionId;
    const sid = options.sessionId;
    this.log = (level, msg, fields) => options.log(level, msg, { session: sid, ...fields });
    this.ledger = new CommandLedger(this.log);
    this.media = { origin: httpOrigin(options.edgeUrl), token: options.token, sessionId: sid };
    this.events = new EventQueue(
      ({ seq, event }) => this.sendFrame({ type: "event", epoch: this.epoch ?? 1, seq, event }),
      () => this.welcomed,
    );
    this.whatsapp = new WhatsAppConnection({
      sessionId: sid,
      network: options.network,
      backoff: options.whatsappBackoff ?? WHATSAPP_BACKOFF,
      log: this.log,
      events: this.events,
      isGone: () => this.gone,
      sentMessage: (_chat, id) => fetchSentMessage(this.media, id),
    });
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
    this.whatsapp.close();
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
    if (firstLease || (!this.whatsapp.isOpen && this.events.pending === 0)) this.whatsapp.auth = welcome.auth;
    // The version that last connected this session: what to announce when the source cannot be read.
    if (welcome.waVersion) this.whatsapp.lastGoodVersion ??= parseVersionText(welcome.waVersion);
    // The edge's word on the proxy holds from now on (absent: an edge from before proxies, none).
    this.whatsapp.proxy = welcome.proxy ?? null;

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

    if (welcome.desired === "running") this.whatsapp.openIfDue();
    // Stopped while the link was down, or assigned as stopped: hold the link, keep WhatsApp closed.
    else this.whatsapp.halt(false);
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
      if (entry.event?.kind === "auth" && this.whatsapp.isOpen) {
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
        this.log("error", "EDGE REFUSED THE BRIDGE CREDENTIAL: check BRIDGE_TOKEN; retrying slowly", fields);
        return "retry-slowly";
      case ALREADY_LINKED:
        // Our previous link, not yet seen closed by the edge (or silent: it goes stale and is replaced).
        this.log("info", "the edge still has a live link of this bridge for the session; retrying", fields);
        return "retry";
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
    this.whatsapp.close();
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
    const result = await this.ledger.run(command, () => this.execute(command));
    if (result && !this.gone) this.sendResult(result);
  }

  private async execute(command: CommandFrame): Promise<Outcome> {
    switch (command.name) {
      case "start":
        this.whatsapp.start(command.args);
        return ok();
      case "stop":
        this.whatsapp.halt(true);
        return ok();
      case "logout":
        await this.whatsapp.logout();
        return ok();
      case "pair":
        return this.whatsapp.pair(command.args);
      case "wa":
        return runOperation(command.args, { edge: this.media, socket: () => this.whatsapp.connectedSocket });
      case "sim":
      case "sim.scan":
      case "sim.disconnect":
        return this.whatsapp.simulate(command);
    }
  }
}
