import { SELF } from "cloudflare:test";
import { asSession, BASE, call, rootSession, type Session } from "./helpers";
import { PATIENCE_MS } from "./patience";

/** The bootstrap token (vitest.workers.config.ts): it opens the bridge link as "local-bridge" only. */
export const BRIDGE_TOKEN = "test-bridge-token";
export const BOOTSTRAP_BRIDGE_ID = "local-bridge";
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
  async next(predicate: (frame: Frame) => boolean, timeoutMs = PATIENCE_MS): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.find(predicate);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching frame; got ${JSON.stringify(this.frames)}`);
      // The timer goes when a frame wakes the wait first: a replay of thousands of frames would
      // otherwise leave one live timer per frame (workerd allows 10,000).
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        timer = setTimeout(resolve, 50);
      });
      clearTimeout(timer);
    }
  }

  async closedWith(timeoutMs = PATIENCE_MS): Promise<{ code: number; reason: string }> {
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

// Storage is isolated per test file, so one signed-in root per file (module) is right.
let root: Promise<Session> | null = null;

/** Creates the bridge's credential as the SUPERADMIN would (POST /api/bridges); answers the token. */
export async function issueBridgeCredential(id: string): Promise<string> {
  root ??= rootSession();
  const res = await call<{ data: { token: string } }>("POST", "/api/bridges", {
    body: { id },
    headers: asSession(await root),
  });
  if (res.status !== 201)
    throw new Error(`bridge credential for ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.token;
}

/** A scripted bridge: a fleet socket plus one session socket per assigned session. */
export class FakeBridge {
  fleet!: Link;
  readonly sessions = new Map<string, Link>();

  constructor(
    readonly id = `bridge-${crypto.randomUUID().slice(0, 8)}`,
    readonly capacity = 100,
    /** Its credential; issued on first connect unless given (BRIDGE_TOKEN for "local-bridge"). */
    public token?: string,
  ) {}

  async credential(): Promise<string> {
    this.token ??= await issueBridgeCredential(this.id);
    return this.token;
  }

  /** The process's id for its fleet link (the `instance` query, as real bridges send); unset: none. */
  instance?: string;

  async dialFleet(): Promise<Response> {
    const instance = this.instance ? `&instance=${this.instance}` : "";
    return dial(
      `/bridge/v1/fleet?bridge=${this.id}&capacity=${this.capacity}${instance}`,
      await this.credential(),
    );
  }

  async connect(held: string[] = []): Promise<this> {
    const res = await this.dialFleet();
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
    const res = await dial(`/bridge/v1/sessions/${sessionId}?bridge=${this.id}`, await this.credential());
    if (!res.webSocket) return { status: res.status };
    const link = new Link(res.webSocket);
    this.sessions.set(sessionId, link);
    return { link, welcome: await link.next((f) => f.type === "welcome") };
  }
}

/**
 * Closes the bridge's link for `sessionId` and dials it again, as a bridge does after a blip. The edge
 * refuses (423) while it still sees the old link open, so this waits for it to notice.
 */
export async function relink(bridge: FakeBridge, sessionId: string) {
  bridge.sessions.get(sessionId)?.socket.close(1000, "relink");
  for (let attempt = 0; ; attempt++) {
    const held = await bridge.hold(sessionId);
    if ("link" in held || held.status !== 423 || attempt >= 40) return held;
    await new Promise((resolve) => setTimeout(resolve, 25));
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

/**
 * A live message `from` wrote in their direct chat, as the bridge reports it (for `emit`); `extra`
 * adds or replaces fields of the message (pushName, raw, timestamp, …).
 */
export const inboundMessage = (
  from: string,
  id: string,
  content: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) => ({
  kind: "message",
  live: true,
  message: { id, chat: from, sender: from, fromMe: false, timestamp: Date.now(), content, ...extra },
});

export const QR_IMAGE = "data:image/png;base64,iVBORw0KGgo=";

/** The first `wa send` command on `link` not in `seen` (waits for it); it is added to `seen`. */
export async function sendCommand(link: Link, seen = new Set<unknown>()): Promise<Frame> {
  const command = await link.next(
    (f) =>
      f.type === "command" && f.name === "wa" && !seen.has(f.id) && (f.args as { op?: string }).op === "send",
  );
  seen.add(command.id);
  return command;
}

/** Answers a `wa send` as a bridge does, with the message sent as `me`; `extra` adds fields (`raw`). */
export function answerSend(
  link: Link,
  command: Frame,
  me: string,
  extra: Record<string, unknown> = {},
): void {
  const args = command.args as { to: string; messageId: string; content: unknown };
  link.send({
    type: "result",
    epoch: 1,
    id: command.id,
    ok: true,
    data: {
      id: args.messageId,
      chat: args.to,
      sender: me,
      fromMe: true,
      timestamp: Date.now(),
      content: args.content,
      status: "SENT",
      ...extra,
    },
  });
}
