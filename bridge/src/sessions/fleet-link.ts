/**
 * The bridge's link to the BridgeFleet DO: says hello with the sessions it holds, then holds what the
 * fleet assigns and lets go of what it unassigns. One `SessionRunner` per held session.
 */

import { randomUUID } from "node:crypto";
import {
  ALREADY_LINKED,
  BRIDGE_PROTOCOL_VERSION,
  type BridgeToFleet,
  CLOSE,
  type FleetToBridge,
  FleetToBridgeSchema,
  parseFrame,
} from "../protocol/link.ts";
import type { WhatsAppNetwork } from "../protocol/seam.ts";
import type { Backoff } from "../shared/backoff.ts";
import { asSession } from "../shared/fault-guard.ts";
import { errorMessage, type Log } from "../shared/log.ts";
import { type AfterClose, type LinkClose, ReconnectingSocket } from "../shared/reconnecting-socket.ts";
import { SessionRunner } from "./session-runner.ts";

export interface FleetLinkOptions {
  /** ws:// or wss:// origin of the edge, without a trailing slash. */
  edgeUrl: string;
  token: string;
  bridgeId: string;
  /** Sessions this bridge accepts; assignments beyond it are released at once. */
  capacity: number;
  network: WhatsAppNetwork;
  log: Log;
  linkBackoff?: Backoff;
  whatsappBackoff?: Backoff;
  slowRetryMs?: number;
}

export class FleetLink {
  private readonly runners = new Map<string, SessionRunner>();
  private readonly link: ReconnectingSocket;
  private shuttingDown = false;
  /**
   * Sessions let go of while the fleet link was down. They are told before the next hello: the fleet
   * gives a bridge back every session assigned to it that its hello does not list (a restart within
   * the grace period), so a release that arrived after the hello would be undone.
   */
  private readonly unsentReleases = new Set<string>();

  constructor(private readonly options: FleetLinkOptions) {
    // One instance per process, kept across redials: the fleet lets this process replace a link of
    // its own that the edge still counts as live, and refuses (423) any other process with this id.
    const query = new URLSearchParams({
      bridge: options.bridgeId,
      capacity: String(options.capacity),
      instance: randomUUID(),
    });
    this.link = new ReconnectingSocket({
      url: `${options.edgeUrl}/bridge/v1/fleet?${query}`,
      token: options.token,
      ...(options.linkBackoff ? { backoff: options.linkBackoff } : {}),
      ...(options.slowRetryMs ? { slowRetryMs: options.slowRetryMs } : {}),
      // Nothing is queued while down: releases wait in `unsentReleases`, the hello is sent afresh.
      maxQueued: 0,
      onOpen: () => this.onOpen(),
      onMessage: (text) => this.onFrame(text),
      onClose: (close) => this.onClose(close),
      onError: (error) => options.log("debug", "fleet link error", { error: error.message }),
    });
  }

  start(): void {
    this.options.log("info", "bridge starting", {
      bridge: this.options.bridgeId,
      capacity: this.options.capacity,
      simulator: this.options.network.simulated,
    });
    this.link.start();
  }

  /** Ids of the sessions held now. */
  get sessions(): string[] {
    return [...this.runners.keys()];
  }

  runner(sessionId: string): SessionRunner | undefined {
    return this.runners.get(sessionId);
  }

  /**
   * Closes every WhatsApp socket WITHOUT logging out (another bridge carries on with the same creds),
   * then the fleet link with 1001 so the edge reassigns at once, then the session links.
   * `runner.stop()` ends its WhatsApp socket synchronously, before its first await, so no account is
   * ever open on two bridges; the fleet link goes next because waiting for 1,000 session-link close
   * handshakes first outlasted the shutdown budget and left the edge waiting out its grace period.
   */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    const runners = [...this.runners.values()];
    this.runners.clear();
    this.options.log("info", "bridge shutting down", { sessions: runners.length });
    const stopping = runners.map((runner) => runner.stop(1001, "bridge shutting down"));
    await this.link.close(1001, "bridge shutting down");
    await Promise.all(stopping);
  }

  private send(frame: BridgeToFleet): boolean {
    return this.link.send(JSON.stringify(frame));
  }

  private release(session: string): void {
    if (!this.send({ type: "released", session })) this.unsentReleases.add(session);
  }

  private onOpen(): void {
    this.link.resetBackoff();
    this.options.log("info", "fleet link open", { sessions: this.runners.size });
    for (const session of this.unsentReleases) this.send({ type: "released", session });
    this.unsentReleases.clear();
    this.send({ type: "hello", version: BRIDGE_PROTOCOL_VERSION, sessions: this.sessions });
  }

  private onFrame(text: string): void {
    const frame = parseFrame(FleetToBridgeSchema, text);
    if (!frame) {
      this.options.log("warn", "ignored a fleet frame outside the protocol", { bytes: text.length });
      return;
    }
    try {
      if (frame.type === "assign") this.assign(frame);
      else
        this.unassign(frame).catch((error: unknown) =>
          this.options.log("error", "unassign failed", {
            session: frame.session,
            error: errorMessage(error),
          }),
        );
    } catch (error) {
      this.options.log("error", "fleet frame handler failed", {
        type: frame.type,
        error: errorMessage(error),
      });
    }
  }

  private assign({ session }: Extract<FleetToBridge, { type: "assign" }>): void {
    this.unsentReleases.delete(session);
    if (this.shuttingDown || this.runners.has(session)) return;
    if (this.runners.size >= this.options.capacity) {
      this.options.log("warn", "assignment over capacity released", { session });
      this.release(session);
      return;
    }
    this.options.log("info", "session assigned", { session });
    // Everything the runner starts carries the session's name, so a stray fault is logged as its own.
    asSession(session, () => this.startRunner(session));
  }

  private startRunner(session: string): void {
    const runner = new SessionRunner({
      sessionId: session,
      bridgeId: this.options.bridgeId,
      edgeUrl: this.options.edgeUrl,
      token: this.options.token,
      network: this.options.network,
      log: this.options.log,
      ...(this.options.linkBackoff ? { linkBackoff: this.options.linkBackoff } : {}),
      ...(this.options.whatsappBackoff ? { whatsappBackoff: this.options.whatsappBackoff } : {}),
      ...(this.options.slowRetryMs ? { slowRetryMs: this.options.slowRetryMs } : {}),
      onGone: (id, release) => this.onRunnerGone(runner, id, release),
    });
    this.runners.set(session, runner);
    runner.start();
  }

  private async unassign({ session }: Extract<FleetToBridge, { type: "unassign" }>): Promise<void> {
    const runner = this.runners.get(session);
    if (!runner) return;
    this.runners.delete(session);
    this.options.log("info", "session unassigned", { session });
    await runner.stop(1000, "unassigned");
  }

  private onRunnerGone(runner: SessionRunner, sessionId: string, release: boolean): void {
    // Only if it is still this runner: an unassign + assign may already have replaced it.
    if (this.runners.get(sessionId) === runner) this.runners.delete(sessionId);
    if (release && !this.shuttingDown) this.release(sessionId);
  }

  private onClose(close: LinkClose): AfterClose {
    if (this.shuttingDown) return "stop";
    const fields = { code: close.code, reason: close.reason, http: close.httpStatus };
    if (close.httpStatus === 401 || close.httpStatus === 403) {
      this.options.log(
        "error",
        "EDGE REFUSED THE BRIDGE CREDENTIAL: check BRIDGE_TOKEN is this bridge's (bound to BRIDGE_ID); retrying slowly",
        fields,
      );
      return "retry-slowly";
    }
    if (close.httpStatus === ALREADY_LINKED) {
      // Another process with this BRIDGE_ID: the edge lets this process's own redial replace a link
      // of its own (the `instance` query), so only a second bridge gets here. Backoff, not the slow
      // lane: the other one may be a bridge that just stopped, whose link goes stale within 45 s.
      this.options.log(
        "error",
        `ANOTHER PROCESS IS CONNECTED AS ${this.options.bridgeId}: two bridges share this BRIDGE_ID (or one just stopped); retrying`,
        fields,
      );
      return "retry";
    }
    if (close.code === CLOSE.REVOKED) {
      this.options.log(
        "error",
        "THIS BRIDGE'S CREDENTIAL WAS REVOKED: its sessions moved; retrying slowly",
        fields,
      );
      return "retry-slowly";
    }
    // The sessions stay held (their own links are independent); the next hello lists them.
    this.options.log("warn", "fleet link down; reconnecting", fields);
    return "retry";
  }
}
