/**
 * A WebSocket to the edge that comes back by itself: jittered exponential backoff, a slow lane for
 * refusals that a quick retry will not fix (a wrong token), a bounded queue for frames sent while down,
 * and one shared heartbeat that finds half-open TCP connections.
 */
import WebSocket from "ws";
import { LINK_HEARTBEAT } from "../protocol/link.ts";
import { type Backoff, backoffDelay, LINK_BACKOFF } from "./backoff.ts";

export interface LinkClose {
  /** WebSocket close code; 1006 when the connection dropped or the upgrade was refused. */
  code: number;
  reason: string;
  /** The HTTP status when the upgrade itself was refused (401, 409 …), else null. */
  httpStatus: number | null;
}

/** The owner's verdict on a close: come back soon, come back slowly, or let it be. */
export type AfterClose = "retry" | "retry-slowly" | "stop";

export interface ReconnectingSocketOptions {
  url: string;
  token: string;
  backoff?: Backoff;
  /** Delay for `retry-slowly` (jittered between half and all of it). */
  slowRetryMs?: number;
  /** Frames kept while down and flushed after `onOpen`; 0 drops them (the owner replays instead). */
  maxQueued?: number;
  onOpen(): void;
  onMessage(text: string): void;
  onClose(close: LinkClose): AfterClose;
  onError?(error: Error): void;
}

// ── Heartbeat ───────────────────────────────────────────────────────────────────────────────────
// One interval for every link of the process (a bridge holds 1,000+), not one timer per socket. Each
// beat sends the protocol's `ping` text, which the edge answers with `pong` and records (so the edge
// knows this link is alive, protocol/link.ts LINK_HEARTBEAT). A link that has answered nothing since
// the previous beat is dead (a half-open TCP connection never closes by itself): terminate it, and
// its owner reconnects.
const HEARTBEAT_MS = LINK_HEARTBEAT.intervalMs;
const answered = new Map<WebSocket, boolean>();
let heartbeat: NodeJS.Timeout | null = null;

function watch(ws: WebSocket): void {
  answered.set(ws, true);
  if (!heartbeat) {
    heartbeat = setInterval(beat, HEARTBEAT_MS);
    heartbeat.unref();
  }
}

function unwatch(ws: WebSocket): void {
  answered.delete(ws);
  if (answered.size === 0 && heartbeat) {
    clearInterval(heartbeat);
    heartbeat = null;
  }
}

function beat(): void {
  for (const [ws, ok] of answered) {
    if (!ok) {
      ws.terminate();
      continue;
    }
    answered.set(ws, false);
    ws.send(LINK_HEARTBEAT.ping);
  }
}

// ── The socket ──────────────────────────────────────────────────────────────────────────────────

export class ReconnectingSocket {
  private ws: WebSocket | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private attempt = 0;
  private stopped = false;
  private queue: string[] = [];

  constructor(private readonly options: ReconnectingSocketOptions) {}

  start(): void {
    if (this.stopped || this.ws || this.retryTimer) return;
    this.connect();
  }

  get isOpen(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  /** Sends now if open; otherwise queues (bounded by `maxQueued`). False when the frame was dropped. */
  send(text: string): boolean {
    const ws = this.ws;
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(text);
      return true;
    }
    if (this.stopped || this.queue.length >= (this.options.maxQueued ?? 0)) return false;
    this.queue.push(text);
    return true;
  }

  /**
   * The link proved healthy (the owner decides what that means: the session link waits for `welcome`,
   * so an edge that accepts and at once closes again cannot drive a tight reconnect loop).
   */
  resetBackoff(): void {
    this.attempt = 0;
  }

  /** Closes for good with `code` (1001 on shutdown lets the edge reassign at once); no reconnect. */
  async close(code = 1000, reason = ""): Promise<void> {
    this.stopped = true;
    this.queue = [];
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const ws = this.ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      // The edge should answer the close frame at once; do not let a dead peer hold up a shutdown.
      const giveUp = setTimeout(() => {
        ws.terminate();
        resolve();
      }, 2_000);
      ws.once("close", () => {
        clearTimeout(giveUp);
        resolve();
      });
      if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      else if (ws.readyState === WebSocket.OPEN) ws.close(code, reason);
    });
  }

  private connect(): void {
    this.retryTimer = null;
    let httpStatus: number | null = null;
    const ws = new WebSocket(this.options.url, {
      headers: { authorization: `Bearer ${this.options.token}` },
      handshakeTimeout: 10_000,
    });
    this.ws = ws;

    // A refused upgrade (401 wrong token, 409 lease held elsewhere) says more than "connection
    // failed": keep the status for the owner, then abort, which ends in error + close as usual.
    ws.on("unexpected-response", (_request, response) => {
      httpStatus = response.statusCode ?? null;
      response.resume();
      ws.terminate();
    });
    ws.on("open", () => {
      watch(ws);
      this.options.onOpen();
      const queued = this.queue;
      this.queue = [];
      for (const text of queued) this.send(text);
    });
    ws.on("message", (data, isBinary) => {
      if (answered.has(ws)) answered.set(ws, true);
      if (isBinary) return; // the protocol is text frames only
      const text = data.toString();
      if (text !== LINK_HEARTBEAT.pong) this.options.onMessage(text);
    });
    ws.on("error", (error) => this.options.onError?.(error));
    ws.on("close", (code, reason) => {
      unwatch(ws);
      if (this.ws === ws) this.ws = null;
      if (this.stopped) return;
      const after = this.options.onClose({ code, reason: reason.toString(), httpStatus });
      if (after === "stop" || this.stopped) {
        this.stopped = true;
        return;
      }
      const delay =
        after === "retry-slowly"
          ? slowDelay(this.options.slowRetryMs ?? 30_000)
          : backoffDelay(this.attempt++, this.options.backoff ?? LINK_BACKOFF);
      this.retryTimer = setTimeout(() => this.connect(), delay);
    });
  }
}

function slowDelay(ms: number): number {
  return Math.floor(ms / 2 + (Math.random() * ms) / 2);
}
