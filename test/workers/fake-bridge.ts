import { SELF } from "cloudflare:test";
import { BASE } from "./helpers";

export const BRIDGE_TOKEN = "test-bridge-token";
type Frame = Record<string, unknown> & { type: string };

/** One side of a real WebSocket to the edge, recording what arrives. */
export class Link {
  readonly frames: Frame[] = [];
  closed: { code: number; reason: string } | null = null;
  private waiters: (() => void)[] = [];

  constructor(readonly socket: WebSocket) {
    socket.accept();
    socket.addEventListener("message", (event) => {
      this.frames.push(JSON.parse(String(event.data)) as Frame);
      this.wake();
    });
    socket.addEventListener("close", (event) => {
      this.closed = { code: event.code, reason: event.reason };
      this.wake();
    });
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }

  /** Resolves with the first recorded frame matching `predicate`, waiting up to `timeoutMs`. */
  async next(predicate: (frame: Frame) => boolean, timeoutMs = 3000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.find(predicate);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching frame; got ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  async closedWith(timeoutMs = 3000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error("socket did not close");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.closed;
  }

  private wake(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}

export async function dial(path: string, token = BRIDGE_TOKEN): Promise<Response> {
  return SELF.fetch(`${BASE}${path}`, {
    headers: { Upgrade: "websocket", Authorization: `Bearer ${token}` },
  });
}

/** A scripted bridge: a fleet socket plus one session socket per assigned session. */
export class FakeBridge {
  fleet!: Link;
  readonly sessions = new Map<string, Link>();

  constructor(
    readonly id = `bridge-${crypto.randomUUID().slice(0, 8)}`,
    readonly capacity = 100,
  ) {}

  async connect(held: string[] = []): Promise<this> {
    const res = await dial(`/bridge/v1/fleet?bridge=${this.id}&capacity=${this.capacity}`);
    if (!res.webSocket) throw new Error(`fleet upgrade failed: ${res.status}`);
    this.fleet = new Link(res.webSocket);
    this.fleet.send({ type: "hello", version: 1, sessions: held });
    return this;
  }

  assignments(): string[] {
    return this.fleet.frames.filter((f) => f.type === "assign").map((f) => String(f.session));
  }

  async waitForAssign(sessionId: string): Promise<void> {
    await this.fleet.next((f) => f.type === "assign" && f.session === sessionId);
  }

  /** Dials the session socket; resolves with the link after `welcome`. */
  async hold(sessionId: string): Promise<{ link: Link; welcome: Frame } | { status: number }> {
    const res = await dial(`/bridge/v1/sessions/${sessionId}?bridge=${this.id}`);
    if (!res.webSocket) return { status: res.status };
    const link = new Link(res.webSocket);
    this.sessions.set(sessionId, link);
    return { link, welcome: await link.next((f) => f.type === "welcome") };
  }
}

/** Sends an event and waits for its ack. */
export async function emit(
  link: Link,
  epoch: number,
  seq: number,
  event: Record<string, unknown>,
): Promise<void> {
  link.send({ type: "event", epoch, seq, event });
  await link.next((f) => f.type === "ack" && f.seq === seq);
}

export const QR_IMAGE = "data:image/png;base64,iVBORw0KGgo=";
