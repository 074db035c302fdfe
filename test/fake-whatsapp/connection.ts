/**
 * One client connected to the fake: the Noise handshake, then binary nodes both ways (Baileys' own
 * `encodeBinaryNode`/`decodeBinaryNode`), with `query` for stanzas that expect a reply.
 */
import { type BinaryNode, decodeBinaryNode, encodeBinaryNode, type KeyPair } from "@whiskeysockets/baileys";
import type { WebSocket } from "ws";
import {
  type CertificateChainKind,
  type ClientFinish,
  certificateChain,
  FrameReader,
  frame,
  ServerHandshake,
  type Transport,
} from "./noise.ts";

export interface ConnectionHandlers {
  /** The handshake is done: decide between registration (QR pairing) and login. */
  onClientFinish(connection: ClientConnection, finish: ClientFinish): void | Promise<void>;
  /** A node that is not the reply to one of our queries. */
  onNode(connection: ClientConnection, node: BinaryNode): void | Promise<void>;
  onClose(connection: ClientConnection): void;
}

const QUERY_TIMEOUT_MS = 10_000;
const STREAM_END_GRACE_MS = 2_000;

export class ClientConnection {
  /** The client's static Noise key, once the handshake has proved it holds it. */
  clientStatic: Buffer | undefined;
  /** The device JID this connection logged in as (after a successful login). */
  jid: string | undefined;
  private readonly reader = new FrameReader();
  private readonly handshake: ServerHandshake;
  private readonly certificates: Uint8Array;
  private transport: Transport | undefined;
  private helloAnswered = false;
  private readonly waiting = new Map<
    string,
    { resolve: (node: BinaryNode) => void; reject: (e: Error) => void }
  >();
  private nextId = 1;
  /** Frames are handled one at a time, in order: decoding is async and replies must keep their order. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly ws: WebSocket,
    serverStatic: KeyPair,
    private readonly handlers: ConnectionHandlers,
    private readonly log: (line: string) => void,
    certificates: { root: KeyPair; kind: CertificateChainKind },
  ) {
    this.handshake = new ServerHandshake(serverStatic);
    this.certificates = certificateChain(serverStatic, certificates.root, certificates.kind);
    ws.on("message", (data: Buffer) => {
      this.queue = this.queue.then(() => this.receive(data)).catch((error: unknown) => this.fail(error));
    });
    ws.on("close", () => {
      for (const { reject } of [...this.waiting.values()]) reject(new Error("the client hung up"));
      handlers.onClose(this);
    });
  }

  get isOpen(): boolean {
    return this.ws.readyState === this.ws.OPEN;
  }

  send(node: BinaryNode): void {
    if (!this.transport) throw new Error("send before the handshake finished");
    this.log(`-> ${describe(node)}`);
    this.ws.send(frame(this.transport.encrypt(encodeBinaryNode(node))));
  }

  /** Sends an iq and resolves with the client's reply (matched by id, as WhatsApp does). */
  query(node: BinaryNode): Promise<BinaryNode> {
    const id = node.attrs.id ?? `fake-${this.nextId++}`;
    return new Promise<BinaryNode>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`no reply to ${node.tag} ${id}`));
      }, QUERY_TIMEOUT_MS);
      const settle = () => {
        clearTimeout(timer);
        this.waiting.delete(id);
      };
      this.waiting.set(id, {
        resolve: (reply) => {
          settle();
          resolve(reply);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      this.send({ ...node, attrs: { ...node.attrs, id } });
    });
  }

  /**
   * Ends the stream the way WhatsApp does: a `stream:error` (e.g. code 515, restart). The client hangs
   * up on reading it; closing at once could beat its (asynchronous) read, so we only close a laggard.
   */
  endStream(code: number): void {
    if (!this.isOpen) return;
    this.send({ tag: "stream:error", attrs: { code: String(code) } });
    setTimeout(() => this.ws.close(), STREAM_END_GRACE_MS).unref();
  }

  close(): void {
    this.ws.close();
  }

  /** Drops the TCP connection without a close frame, as a server going down does. */
  terminate(): void {
    this.ws.terminate();
  }

  private async receive(data: Buffer): Promise<void> {
    for (const body of this.reader.push(data)) {
      if (this.transport) this.receiveNode(await decodeBinaryNode(this.transport.decrypt(body)));
      else if (!this.helloAnswered) {
        this.helloAnswered = true;
        this.ws.send(frame(this.handshake.serverHello(body, this.certificates)));
      } else {
        const finish = this.handshake.clientFinish(body);
        this.transport = this.handshake.transport();
        this.clientStatic = finish.clientStatic;
        this.run(() => this.handlers.onClientFinish(this, finish));
      }
    }
  }

  private receiveNode(node: BinaryNode): void {
    this.log(`<- ${describe(node)}`);
    const id = node.attrs.id;
    const waiter = id === undefined ? undefined : this.waiting.get(id);
    if (waiter && node.tag === "iq") {
      waiter.resolve(node);
      return;
    }
    this.run(() => this.handlers.onNode(this, node));
  }

  /** Handlers run outside the frame queue: one awaiting a reply must not block reading that reply. */
  private run(handler: () => void | Promise<void>): void {
    Promise.resolve()
      .then(handler)
      .catch((error: unknown) => this.fail(error));
  }

  private fail(error: unknown): void {
    this.log(`connection failed: ${error instanceof Error ? error.message : String(error)}`);
    this.ws.close();
  }
}

/** A one-line summary of a node for the fake's log: tag, attributes and first-level children. */
export function describe(node: BinaryNode): string {
  const attrs = Object.entries(node.attrs)
    .map(([key, value]) => `${key}=${value}`)
    .join(" ");
  const children = Array.isArray(node.content) ? node.content.map((child) => child.tag).join(",") : "";
  return `<${node.tag}${attrs ? ` ${attrs}` : ""}>${children ? `[${children}]` : ""}`;
}
