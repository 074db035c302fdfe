/**
 * An in-memory WhatsApp: the seam of `seam.ts` without Baileys or a network, for tests and demos. It
 * behaves like the real thing where the bridge can tell: QR codes that rotate and run out (408), a
 * scanned QR that stores creds and then asks for a restart (515), and a linked device that connects
 * straight away on its stored creds.
 */
import { randomBytes, randomInt } from "node:crypto";
import type { Me } from "./protocol.ts";
import type {
  CloseInfo,
  Json,
  OpenOptions,
  SocketHandlers,
  WhatsAppNetwork,
  WhatsAppSocket,
} from "./seam.ts";

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

function randomDigits(count: number): string {
  let digits = "";
  for (let i = 0; i < count; i++) digits += String(randomInt(10));
  return digits;
}

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
  readonly simulate = { scan: () => this.scan(), disconnect: (code: number) => this.disconnect(code) };

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
    this.clearQrTimer();
    this.network.openSockets--;
  }

  private clearQrTimer(): void {
    if (this.qrTimer) clearTimeout(this.qrTimer);
    this.qrTimer = null;
  }
}

interface SimulatorState {
  readonly qrIntervalMs: number;
  readonly maxQrs: number;
  openSockets: number;
  linkedPhones: number;
}

export function simulatorNetwork(options: SimulatorOptions = {}): SimulatorNetwork {
  const state: SimulatorState = {
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
