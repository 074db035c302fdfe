/**
 * An in-memory WhatsApp: the seam of `seam.ts` without Baileys or a network, for tests and demos. It
 * behaves like the real thing where the bridge can tell: QR codes that rotate and run out (408), a
 * scanned QR that stores creds and then asks for a restart (515), and a linked device that connects
 * straight away on its stored creds. Once connected, operations run against a world shared by every
 * socket of the network (world.ts): see messages.ts, groups.ts, and
 * control.ts for the `sim` actions a test drives it with.
 */
import { randomBytes, randomInt } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { Me } from "../protocol/link.ts";
import type { NetworkEvent } from "../protocol/messaging.ts";
import { isGroupOperation } from "../protocol/operation-rules.ts";
import type { Operation } from "../protocol/operations.ts";
import {
  type CloseInfo,
  type Json,
  type MediaBytes,
  type OpenOptions,
  OperationError,
  type PerformResult,
  type PreparedMedia,
  type SocketHandlers,
  type WhatsAppNetwork,
  type WhatsAppSocket,
} from "../protocol/seam.ts";
import { runControl } from "./control.ts";
import { performGroup } from "./groups.ts";
import { performMessaging, type SimContext } from "./messages.ts";
import { randomDigits, SimWorld } from "./world.ts";

/**
 * The simulated network keeps what it delivers in memory; a spooled video or document is read in
 * before the operation's end removes its file.
 */
async function heldInMemory(media: PreparedMedia | null): Promise<MediaBytes | null> {
  if (!media || !("file" in media)) return media;
  const { file, ...meta } = media;
  return { ...meta, bytes: await readFile(file.path) };
}

export interface SimulatorOptions {
  /** How long each QR shows before the next one (WhatsApp: 20 s after the first). */
  qrIntervalMs?: number;
  /** QRs shown before the socket gives up with 408 (WhatsApp sends about five refs). */
  maxQrs?: number;
}

export interface SimulatorNetwork extends WhatsAppNetwork {
  /** Simulated sockets currently open, across every session. */
  readonly openSockets: number;
  /** How many sockets were ever opened for `sessionId`. */
  opens(sessionId: string): number;
}

const PAIRING_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** The `me` of creds a scan stored, or null while the device is not linked. */
function linkedMe(creds: Json): Me | null {
  if (typeof creds !== "object" || creds === null || Array.isArray(creds)) return null;
  if (creds.registered !== true) return null;
  const me = creds.me;
  if (typeof me !== "object" || me === null || Array.isArray(me) || typeof me.id !== "string") return null;
  return typeof me.name === "string" ? { id: me.id, name: me.name } : { id: me.id };
}

type Phase = "starting" | "qr" | "linking" | "open" | "closed";

class SimulatedSocket implements WhatsAppSocket {
  private phase: Phase = "starting";
  private qrsShown = 0;
  // The only timer a simulated socket owns, and only while a QR is showing.
  private qrTimer: NodeJS.Timeout | null = null;
  readonly simulate = {
    scan: () => this.scan(),
    disconnect: (code: number) => this.disconnect(code),
    control: async (args: Record<string, unknown>) => runControl(this.context(), this.phase === "open", args),
  };
  /** This socket's way into the world; only while open does the world reach the handlers. */
  private readonly emit = (event: NetworkEvent) => {
    if (this.phase === "open") this.handlers.onNetworkEvent(event);
  };

  constructor(
    private readonly sessionId: string,
    private readonly creds: Json,
    private readonly handlers: SocketHandlers,
    private readonly network: SimulatorState,
  ) {
    // Like Baileys, report progress only after `open()` returned, so the caller holds the socket first.
    setImmediate(() => this.begin());
  }

  private begin(): void {
    if (this.phase === "closed") return;
    this.handlers.onConnecting();
    if (this.phase !== "starting") return; // closed from inside onConnecting
    const me = linkedMe(this.creds);
    if (me) {
      this.phase = "open";
      this.handlers.onOpen(me);
      // After `connected`: events WhatsApp held for the account while it was away follow it.
      if (this.phase === "open") this.network.world.attach(this.sessionId, me, this.emit);
    } else {
      this.showQr();
    }
  }

  private showQr(): void {
    this.qrsShown++;
    this.phase = "qr";
    this.qrTimer = setTimeout(() => this.nextQr(), this.network.qrIntervalMs);
    this.handlers.onQr(`sim-qr:${this.sessionId}:${this.qrsShown}:${randomBytes(12).toString("base64url")}`);
  }

  private nextQr(): void {
    this.qrTimer = null;
    if (this.qrsShown >= this.network.maxQrs) {
      this.end({ code: 408, reason: "QR refs attempts ended", qrExpired: true, loggedOut: false });
    } else {
      this.showQr();
    }
  }

  private scan(): void {
    if (this.phase !== "qr") throw new Error("no QR is showing");
    this.clearQrTimer();
    this.phase = "linking";
    const linked = ++this.network.linkedPhones;
    const creds: Json = {
      registered: true,
      // What Baileys records at pair-success: the phone's signed device identity (here a stand-in).
      account: { simulated: true },
      me: { id: `${randomDigits(12)}@s.whatsapp.net`, name: `Simulated ${linked}` },
      simSecret: randomBytes(16).toString("base64"),
    };
    // As on WhatsApp, a fresh link ends in 515 "restart required". The restart happens only once the
    // creds are durable, so a bridge that loses the edge mid-link cannot come back unlinked.
    this.handlers.persistAuth({ creds }).then(
      () => this.end({ code: 515, reason: "restart required", qrExpired: false, loggedOut: false }),
      () => this.end({ code: 500, reason: "could not store creds", qrExpired: false, loggedOut: false }),
    );
  }

  private disconnect(code: number): void {
    if (this.phase === "closed") throw new Error("socket is closed");
    this.end({ code, reason: `simulated disconnect (${code})`, qrExpired: false, loggedOut: code === 401 });
  }

  async requestPairingCode(digits: string): Promise<string> {
    if (this.phase !== "qr") throw new Error("pairing needs a socket that waits to be linked");
    if (!/^\d{8,15}$/.test(digits)) throw new Error("phone number must be 8-15 digits");
    let code = "";
    for (let i = 0; i < 8; i++) code += PAIRING_ALPHABET[randomInt(PAIRING_ALPHABET.length)];
    return code;
  }

  async perform(operation: Operation, media: PreparedMedia | null): Promise<PerformResult> {
    if (this.phase !== "open") throw new OperationError(503, "WhatsApp is not connected");
    const context = this.context();
    return isGroupOperation(operation)
      ? performGroup(context, operation)
      : performMessaging(context, operation, await heldInMemory(media));
  }

  private context(): SimContext {
    const account = this.network.world.account(this.sessionId);
    return { world: this.network.world, account, me: account.me?.id ?? "" };
  }

  async logout(): Promise<void> {
    if (this.phase === "closed") throw new Error("Connection Closed");
    this.end({ code: 401, reason: "Intentional Logout", qrExpired: false, loggedOut: true });
  }

  close(): void {
    if (this.phase === "closed") return;
    this.markClosed();
  }

  private end(info: CloseInfo): void {
    if (this.phase === "closed") return;
    this.markClosed();
    this.handlers.onClose(info);
  }

  private markClosed(): void {
    this.phase = "closed";
    this.network.world.detach(this.sessionId, this.emit);
    this.clearQrTimer();
    this.network.openSockets--;
  }

  private clearQrTimer(): void {
    if (this.qrTimer) clearTimeout(this.qrTimer);
    this.qrTimer = null;
  }
}

interface SimulatorState {
  readonly world: SimWorld;
  readonly qrIntervalMs: number;
  readonly maxQrs: number;
  openSockets: number;
  linkedPhones: number;
}

export function simulatorNetwork(options: SimulatorOptions = {}): SimulatorNetwork {
  const state: SimulatorState = {
    world: new SimWorld(),
    qrIntervalMs: options.qrIntervalMs ?? 20_000,
    maxQrs: options.maxQrs ?? 5,
    openSockets: 0,
    linkedPhones: 0,
  };
  const opensBySession = new Map<string, number>();
  return {
    simulated: true,
    get openSockets() {
      return state.openSockets;
    },
    opens: (sessionId) => opensBySession.get(sessionId) ?? 0,
    open({ sessionId, auth, handlers }: OpenOptions): WhatsAppSocket {
      opensBySession.set(sessionId, (opensBySession.get(sessionId) ?? 0) + 1);
      state.openSockets++;
      return new SimulatedSocket(sessionId, auth.creds, handlers, state);
    },
  };
}
