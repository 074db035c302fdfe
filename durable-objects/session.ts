import { DurableObject } from "cloudflare:workers";
import type { LiveSocketHost } from "../workers/auth/live-sockets";
import type { Env } from "../workers/core/env";
import type { SessionConfigCopy } from "./messaging/config/session";
import type { Outcome } from "./messaging/context";
import type { StoredMedia } from "./messaging/media/store";
import type { WebhookEndpoint } from "./messaging/webhooks/types";
import type { SessionObject, SessionSnapshot } from "./session/contract";
import type { StoredProxy } from "./session/proxy";
import { SessionRuntime } from "./session/runtime";
import { cutViewers } from "./session/viewers";

/**
 * One messaging session (named by its internal id): the Durable Object shell around
 * SessionRuntime (session/runtime.ts), which holds the lifecycle, the bridge's lease and link, the
 * auth state and the messaging modules. The methods are the contract in session/contract.ts; the
 * WebSocket and alarm handlers are the bridge's and dashboard viewers' sockets and the messaging
 * timers. See docs/sessions.md for the lifecycle and the protocol.
 */
export class SessionDO extends DurableObject<Env> implements SessionObject, LiveSocketHost {
  readonly #session: SessionRuntime;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#session = new SessionRuntime(ctx, env);
  }

  call(sessionId: string, name: string, input: unknown): Promise<Outcome<unknown>> {
    return this.#session.call(sessionId, name, input);
  }

  configure(sessionId: string, copy: SessionConfigCopy): Promise<void> {
    return this.#session.configure(sessionId, copy);
  }

  setWebhooks(sessionId: string, endpoints: WebhookEndpoint[]): Promise<void> {
    return this.#session.setWebhooks(sessionId, endpoints);
  }

  leaseHolder(sessionId: string): Promise<string | null> {
    return this.#session.leaseHolder(sessionId);
  }

  media(sessionId: string, ref: string): Promise<StoredMedia | null> {
    return this.#session.media(sessionId, ref);
  }

  sentMessage(sessionId: string, messageId: string): Promise<string | null> {
    return this.#session.sentMessage(sessionId, messageId);
  }

  simulateWorld(sessionId: string, args: Record<string, unknown>): Promise<Outcome<unknown>> {
    return this.#session.simulateWorld(sessionId, args);
  }

  simulate(sessionId: string, name: "sim.scan" | "sim.disconnect", code?: number): Promise<Outcome<unknown>> {
    return this.#session.simulate(sessionId, name, code);
  }

  snapshot(sessionId: string): Promise<SessionSnapshot> {
    return this.#session.snapshot(sessionId);
  }

  awaitQr(sessionId: string, waitMs: number): Promise<SessionSnapshot> {
    return this.#session.awaitQr(sessionId, waitMs);
  }

  start(sessionId: string): Promise<Outcome<SessionSnapshot>> {
    return this.#session.start(sessionId);
  }

  stop(sessionId: string): Promise<Outcome<SessionSnapshot>> {
    return this.#session.stop(sessionId);
  }

  restart(sessionId: string): Promise<Outcome<SessionSnapshot>> {
    return this.#session.restart(sessionId);
  }

  setProxy(sessionId: string, proxy: StoredProxy | null): Promise<Outcome<SessionSnapshot>> {
    return this.#session.setProxy(sessionId, proxy);
  }

  logout(sessionId: string): Promise<Outcome<SessionSnapshot>> {
    return this.#session.logout(sessionId);
  }

  pair(sessionId: string, phoneNumber: string): Promise<Outcome<{ pairingCode: string }>> {
    return this.#session.pair(sessionId, phoneNumber);
  }

  destroy(sessionId: string): Promise<void> {
    return this.#session.destroy(sessionId);
  }

  grantLease(sessionId: string, bridge: string): Promise<number> {
    return this.#session.grantLease(sessionId, bridge);
  }

  revokeLease(sessionId: string): Promise<void> {
    return this.#session.revokeLease(sessionId);
  }

  /** Closes one owner's viewer sockets: their share, key or account ended (workers/auth/live-sockets.ts). */
  async cutSockets(ownerTag: string, code: number, reason: string): Promise<number> {
    return cutViewers(this.ctx, ownerTag, code, reason);
  }

  override fetch(request: Request): Promise<Response> {
    return this.#session.fetch(request);
  }

  override webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    return this.#session.webSocketMessage(ws, message);
  }

  override webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    return this.#session.webSocketClose(ws, code, reason);
  }

  override webSocketError(ws: WebSocket): Promise<void> {
    return this.#session.webSocketError(ws);
  }

  override alarm(): Promise<void> {
    return this.#session.alarm();
  }
}
