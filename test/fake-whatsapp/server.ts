/**
 * A fake WhatsApp server that real Baileys connects to (`waWebSocketUrl`): the Noise handshake, the
 * QR pairing flow (pair-device refs, pair-success, the 515 restart), login (`success`), pre-key upload
 * and the keep-alive. Phones (phone.ts) are in-process and talk to it directly.
 */
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { type BinaryNode, Curve, getBinaryNodeChild, type proto } from "@whiskeysockets/baileys";
import { WebSocketServer } from "ws";
import { FakeAppState } from "./app-state.ts";
import { FakeCalls } from "./calls.ts";
import { ChatStateRelay } from "./chat-states.ts";
import { ClientConnection } from "./connection.ts";
import { LinkCodes } from "./link-code.ts";
import { Messaging } from "./messages.ts";
import { bigEndian, type CertificateChainKind, type ClientFinish } from "./noise.ts";
import { OfflineQueue } from "./offline-queue.ts";
import { encryptIq, result, SERVER_JID } from "./pre-keys.ts";
import { FakePresence } from "./presence.ts";
import { FakePrivacy } from "./privacy.ts";
import { isOlder, type Version } from "./web-version.ts";

export { SERVER_JID };

/** What the companion (the Baileys client) registered in its handshake, before it is paired. */
export interface Registration {
  connection: ClientConnection;
  refs: string[];
  noiseKey: Buffer;
  identityKey: Buffer;
  registrationId: number;
  signedPreKey: SignedPreKey;
}

export interface SignedPreKey {
  id: number;
  publicKey: Buffer;
  signature: Buffer;
}

/** A linked device: what the server knows to let it log in and to hand out its keys. */
export interface LinkedDevice {
  jid: string;
  lid: string;
  noiseKey: Buffer;
  identityKey: Buffer;
  registrationId: number;
  signedPreKey: SignedPreKey;
  /** One-time pre-keys uploaded by the device (`iq set xmlns=encrypt`), by id. */
  preKeys: Map<number, Buffer>;
}

export interface PairSuccess {
  /** `ADVSignedDeviceIdentityHMAC`, as built by the phone. */
  deviceIdentity: Uint8Array;
  jid: string;
  lid: string;
  platform: string;
}

export interface FakeWhatsAppOptions {
  /** Receives one line per stanza and event; silent by default. */
  log?: (line: string) => void;
  /** How many QR refs a pairing offers before Baileys gives up (each lasts one QR). */
  refsPerPairing?: number;
  /** Clients announcing an older WhatsApp Web version are refused with `failure 405`, as WhatsApp does. */
  minimumVersion?: readonly [number, number, number];
  /** The certificate chain every handshake presents (noise.ts); `proper` by default. */
  certificates?: CertificateChainKind;
}

const now = () => String(Math.floor(Date.now() / 1000));

export class FakeWhatsApp {
  readonly devices = new Map<string, LinkedDevice>();
  /** Every JID that logged in (device JIDs), in order: a test sees logins without QR this way. */
  readonly logins: string[] = [];
  /** Stanzas clients sent that are not iq requests (receipts, acks, messages, presence), by device. */
  readonly received: Array<{ jid: string | undefined; node: BinaryNode }> = [];
  /** The WhatsApp Web version each handshake announced, in order. */
  readonly clientVersions: Version[] = [];
  /** Called as each stanza is handed to a device, before it is sent (a test kills the device's bridge here). */
  readonly deliveryHooks: Array<(jid: string, node: BinaryNode) => void> = [];
  /** Messages waiting for each device's acknowledgement (offline-queue.ts). */
  readonly offline = new OfflineQueue();
  /** Called after each login (`first` after pairing): e.g. the phone's history sync (history.ts). */
  readonly loginHooks: Array<(device: LinkedDevice, first: boolean) => void> = [];
  /** Answers for iq requests by xmlns (`w:g2`: groups.ts); an absent or undefined answer is an empty result. */
  readonly iqHandlers = new Map<
    string,
    (device: LinkedDevice, iq: BinaryNode) => BinaryNode[] | undefined | Promise<BinaryNode[] | undefined>
  >();
  private readonly registrations = new Map<string, Registration>();
  private readonly connections = new Set<ClientConnection>();
  /** WebSocket connections accepted so far: a client that gave up does not come back. */
  connectionsAccepted = 0;
  /** The chain the next handshakes present (`options.certificates`; a test may switch it). */
  certificates: CertificateChainKind;
  private readonly staticKey = Curve.generateKeyPair();
  /** This server's certificate root, which no client trusts unless told (the bridge: `rootKey`). */
  private readonly root = Curve.generateKeyPair();
  private readonly log: (line: string) => void;
  /** Device lists, key fetches, group metadata and message routing (messages.ts). */
  readonly messaging: Messaging;
  /** Peers of the protocol: pairing codes (link-code.ts), privacy settings (privacy.ts), calls (calls.ts),
   * presence subscriptions (presence.ts), each account's app-state collections (app-state.ts). */
  readonly linkCodes = new LinkCodes(this.registrations, (line) => this.log(line));
  readonly privacy = new FakePrivacy();
  readonly calls: FakeCalls;
  readonly presence: FakePresence;
  readonly chatStates: ChatStateRelay;
  readonly appState: FakeAppState;

  private constructor(
    private wss: WebSocketServer,
    private readonly options: FakeWhatsAppOptions,
  ) {
    this.log = options.log ?? (() => {});
    this.certificates = options.certificates ?? "proper";
    this.messaging = new Messaging({
      companions: () => this.devices.values(),
      deliver: (jid, node) => this.deliver(jid, node),
      log: this.log,
    });
    this.calls = new FakeCalls({ deliver: (jid, node) => this.deliver(jid, node), log: this.log });
    this.presence = new FakePresence(this, this.messaging.directory, this.log);
    this.chatStates = new ChatStateRelay(this.messaging.directory, (jid) => this.devices.get(jid), this.log);
    this.iqHandlers.set("privacy", (device, iq) => this.privacy.answer(device.jid, iq));
    this.appState = new FakeAppState(this);
    this.iqHandlers.set("w:sync:app:state", (device, iq) => this.appState.answer(device, iq));
    this.loginHooks.push((device) => this.appState.loggedIn(device.jid));
    this.accept(wss);
  }

  private accept(wss: WebSocketServer): void {
    wss.on("connection", (ws) => {
      this.connectionsAccepted++;
      const connection = new ClientConnection(ws, this.staticKey, this.handlers, this.log, {
        root: this.root,
        kind: this.certificates,
      });
      this.connections.add(connection);
    });
  }

  /**
   * A server restart as clients see it: every connection dropped, the port refusing connections for
   * `downMs`, then listening again on the same port with the same keys, accounts, devices and queues.
   */
  async restart(downMs = 1_000): Promise<void> {
    const { port } = this.wss.address() as AddressInfo;
    for (const connection of this.connections) connection.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    await new Promise((resolve) => setTimeout(resolve, downMs));
    this.wss = new WebSocketServer({ host: "127.0.0.1", port });
    await new Promise<void>((resolve) => this.wss.once("listening", () => resolve()));
    this.accept(this.wss);
  }

  static async start(options: FakeWhatsAppOptions = {}): Promise<FakeWhatsApp> {
    const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
    return new FakeWhatsApp(wss, options);
  }

  /** WhatsApp retires versions: from now on, clients announcing one older than `version` get 405. */
  requireVersion(version: readonly [number, number, number]): void {
    this.options.minimumVersion = version;
  }

  /** Where Baileys should connect (`waWebSocketUrl`). */
  get url(): string {
    const { port } = this.wss.address() as AddressInfo;
    return `ws://127.0.0.1:${port}/ws/chat`;
  }

  /** The public key of the root that signs this server's certificate chain (32 bytes). */
  get rootKey(): Buffer {
    return Buffer.from(this.root.public);
  }

  /** The companion waiting to be paired under this QR ref (what a phone looks up when it scans). */
  registrationFor(ref: string): Registration | undefined {
    return this.registrations.get(ref);
  }

  /**
   * The phone approved the companion: send it `pair-success`, wait for its signed reply
   * (`pair-device-sign`), record the device, then restart its stream (515) as WhatsApp does.
   */
  async completePairing(ref: string, success: PairSuccess): Promise<BinaryNode> {
    const registration = this.registrations.get(ref);
    if (!registration) throw new Error(`no companion is waiting with ref ${ref}`);
    const reply = await registration.connection.query({
      tag: "iq",
      attrs: { to: SERVER_JID, type: "set", xmlns: "md", t: now() },
      content: [
        {
          tag: "pair-success",
          attrs: {},
          content: [
            { tag: "device-identity", attrs: {}, content: success.deviceIdentity },
            { tag: "platform", attrs: { name: success.platform } },
            { tag: "device", attrs: { jid: success.jid, lid: success.lid } },
          ],
        },
      ],
    });
    if (reply.attrs.type !== "result" || !getBinaryNodeChild(reply, "pair-device-sign")) {
      throw new Error(`companion refused pairing: ${JSON.stringify(reply.attrs)}`);
    }
    for (const stale of registration.refs) this.registrations.delete(stale);
    this.devices.set(success.jid, {
      jid: success.jid,
      lid: success.lid,
      noiseKey: registration.noiseKey,
      identityKey: registration.identityKey,
      registrationId: registration.registrationId,
      signedPreKey: registration.signedPreKey,
      preKeys: new Map(),
    });
    this.log(`paired ${success.jid}`);
    registration.connection.endStream(515);
    return reply;
  }

  /**
   * Hands a stanza to the device's live connection, as WhatsApp routes messages. A `message` or a
   * `notification` is also kept in the device's offline queue until the device acknowledges it (a
   * receipt or an ack naming its id): one sent while the device is away, or not acknowledged before it
   * went, is delivered again when it logs in. Anything else needs the device connected.
   */
  deliver(jid: string, node: BinaryNode): void {
    const connection = [...this.connections].find((candidate) => candidate.jid === jid && candidate.isOpen);
    const queued = node.tag === "message" || node.tag === "notification";
    if (queued) this.offline.keep(jid, node);
    for (const hook of this.deliveryHooks) hook(jid, node);
    if (connection) connection.send(node);
    else if (!queued) throw new Error(`${jid} is not connected`);
  }

  /** Whether the device `jid` has a live connection now. */
  isConnected(jid: string): boolean {
    return [...this.connections].some((candidate) => candidate.jid === jid && candidate.isOpen);
  }

  /** What a key fetch does: hands out one of the device's one-time pre-keys, once. */
  takePreKey(device: LinkedDevice): [number, Buffer] {
    const first = device.preKeys.entries().next();
    if (first.done) throw new Error(`${device.jid} has no pre-keys left`);
    device.preKeys.delete(first.value[0]);
    return first.value;
  }

  async close(): Promise<void> {
    for (const connection of this.connections) connection.close();
    await this.messaging.close();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private readonly handlers = {
    onClientFinish: (connection: ClientConnection, finish: ClientFinish) =>
      this.onClientFinish(connection, finish),
    onNode: (connection: ClientConnection, node: BinaryNode) => this.onNode(connection, node),
    onClose: (connection: ClientConnection) => {
      this.connections.delete(connection);
      if (connection.jid && !this.isConnected(connection.jid)) this.presence.forget(connection.jid);
      for (const [ref, registration] of this.registrations) {
        if (registration.connection === connection) this.registrations.delete(ref);
      }
    },
  };

  private async onClientFinish(connection: ClientConnection, { clientStatic, payload }: ClientFinish) {
    const app = payload.userAgent?.appVersion;
    const version: Version = [app?.primary ?? 0, app?.secondary ?? 0, app?.tertiary ?? 0];
    this.clientVersions.push(version);
    if (this.options.minimumVersion && isOlder(version, this.options.minimumVersion)) {
      this.log(`version ${version.join(".")} refused`);
      connection.send({ tag: "failure", attrs: { reason: "405", location: "fake" } });
      connection.close();
      return;
    }
    if (payload.devicePairingData) await this.offerPairing(connection, clientStatic, payload);
    else this.login(connection, clientStatic, payload);
  }

  /** A new companion: offer it QR refs (`pair-device`); Baileys shows one QR per ref. */
  private async offerPairing(connection: ClientConnection, noiseKey: Buffer, payload: proto.ClientPayload) {
    const pairing = payload.devicePairingData ?? {};
    const refs = Array.from(
      { length: this.options.refsPerPairing ?? 6 },
      () => `2@${randomBytes(24).toString("base64")}`,
    );
    const registration: Registration = {
      connection,
      refs,
      noiseKey,
      identityKey: Buffer.from(pairing.eIdent ?? []),
      registrationId: bigEndian(pairing.eRegid),
      signedPreKey: {
        id: bigEndian(pairing.eSkeyId),
        publicKey: Buffer.from(pairing.eSkeyVal ?? []),
        signature: Buffer.from(pairing.eSkeySig ?? []),
      },
    };
    for (const ref of refs) this.registrations.set(ref, registration);
    await connection.query({
      tag: "iq",
      attrs: { to: SERVER_JID, type: "set", xmlns: "md" },
      content: [
        {
          tag: "pair-device",
          attrs: {},
          content: refs.map((ref) => ({ tag: "ref", attrs: {}, content: Buffer.from(ref) })),
        },
      ],
    });
  }

  /** A known device logs in: it must present the Noise key it paired with, as on WhatsApp. */
  private login(connection: ClientConnection, noiseKey: Buffer, payload: proto.ClientPayload) {
    const user = String(payload.username ?? "");
    const jid = payload.device ? `${user}:${payload.device}@${SERVER_JID}` : `${user}@${SERVER_JID}`;
    const device = this.devices.get(jid);
    if (!device?.noiseKey.equals(noiseKey)) {
      this.log(`login refused for ${jid}`);
      connection.send({ tag: "failure", attrs: { reason: "401", location: "fake" } });
      connection.close();
      return;
    }
    connection.jid = jid;
    this.logins.push(jid);
    connection.send({ tag: "success", attrs: { t: now(), lid: device.lid, props: "1", location: "fake" } });
    // What waited while it was away (or was never acknowledged), marked `offline`, then the count:
    // Baileys reports those as `append` and flushes its buffered events on the count.
    const waiting = this.offline.waitingFor(jid);
    for (const node of waiting) connection.send(node);
    connection.send({
      tag: "ib",
      attrs: { from: SERVER_JID },
      content: [{ tag: "offline", attrs: { count: String(waiting.length) } }],
    });
    const first = this.logins.filter((login) => login === jid).length === 1;
    for (const hook of this.loginHooks) hook(device, first);
  }

  /**
   * The account-wide `<presence type=… name=…>` stanzas (no `to`: what WhatsApp Web sends coming to
   * the foreground or leaving it) that the device `jid` sent, in order; chat presences are left out.
   */
  presencesFrom(jid: string): Array<{ type: string; name: string | undefined }> {
    return this.received
      .filter(({ jid: from, node }) => from === jid && node.tag === "presence" && !node.attrs.to)
      .map(({ node }) => ({ type: node.attrs.type ?? "", name: node.attrs.name }));
  }

  /** The phone unlinked the device: WhatsApp forgets it and ends its stream (`401`, `device_removed`). */
  removeDevice(jid: string): void {
    this.devices.delete(jid);
    for (const connection of this.connections) {
      if (connection.jid !== jid || !connection.isOpen) continue;
      connection.send({
        tag: "stream:error",
        attrs: { code: "401" },
        content: [{ tag: "conflict", attrs: { type: "device_removed" } }],
      });
      // The client hangs up on reading it; closing at once could beat its read.
      setTimeout(() => connection.close(), 2_000).unref();
    }
  }

  private async onNode(connection: ClientConnection, node: BinaryNode) {
    const request = node.tag === "iq" && (node.attrs.type === "get" || node.attrs.type === "set");
    if (!request) this.received.push({ jid: connection.jid, node });
    if (connection.jid) this.offline.acknowledged(connection.jid, node);
    if (this.linkCodes.handle(connection, node)) return;
    if (this.calls.handle(connection, node) || this.presence.handle(connection, node)) return;
    if (this.chatStates.handle(connection, node)) return;
    if ((await this.messaging.handle(connection, node)) || !request) return;
    const device = connection.jid ? this.devices.get(connection.jid) : undefined;
    const handler = this.iqHandlers.get(node.attrs.xmlns ?? "");
    if (node.attrs.xmlns === "encrypt" && device) connection.send(encryptIq(device, node, this.log));
    else if (handler && device) connection.send(result(node, await handler(device, node)));
    else connection.send(result(node));
  }
}
