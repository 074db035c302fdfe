/**
 * The real WhatsApp network: the seam (`seam.ts`) implemented over Baileys. This is the ONLY file that
 * imports `@whiskeysockets/baileys` (and pino, which Baileys needs as its logger), so everything else in
 * the bridge, and every test but one, runs without it.
 */
import {
  type AuthenticationCreds,
  Browsers,
  BufferJSON,
  DisconnectReason,
  initAuthCreds,
  makeCacheableSignalKeyStore,
  makeWASocket,
  proto,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
} from "@whiskeysockets/baileys";
import { pino } from "pino";
import type { Me } from "./protocol.ts";
import type { AuthUpdate, Json, OpenOptions, WhatsAppNetwork, WhatsAppSocket } from "./seam.ts";

export type {
  AuthUpdate,
  CloseInfo,
  Json,
  OpenOptions,
  SocketHandlers,
  WhatsAppNetwork,
  WhatsAppSocket,
} from "./seam.ts";

export interface BaileysNetworkOptions {
  /** Overrides WhatsApp's endpoint; tests point it at a local server so nothing leaves the machine. */
  waWebSocketUrl?: string;
  connectTimeoutMs?: number;
}

// Baileys logs a lot at info level; the bridge logs what matters itself, one JSON line per event.
const silentLogger = pino({ level: "silent" });

/** Buffers become `{type:"Buffer", data:<base64>}`, the form the edge stores. */
function toJson(value: unknown): Json {
  const parsed: unknown = JSON.parse(JSON.stringify(value, BufferJSON.replacer));
  return parsed as Json;
}

function fromJson(value: Json): unknown {
  return JSON.parse(JSON.stringify(value), BufferJSON.reviver);
}

/**
 * A signal key store over an in-memory map seeded from the edge's copy. Every `set` resolves only once
 * the edge has stored the write (`persist`): Baileys treats a resolved `set` as durable, and a lost key
 * update makes messages undeliverable ("Bad MAC", "waiting for this message").
 */
export function makeWriteThroughKeyStore(
  seed: Record<string, Json>,
  persist: (update: AuthUpdate) => Promise<void>,
): SignalKeyStore {
  // A shallow copy: the values are shared with the caller's snapshot, only the index is new.
  const stored = new Map<string, Json>(Object.entries(seed));
  return {
    async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      const found: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const id of ids) {
        const raw = stored.get(`${type}:${id}`);
        if (raw === undefined || raw === null) continue;
        const value = fromJson(raw);
        // Upstream's own store does this conversion; without it app-state sync fails to decode.
        found[id] = (
          type === "app-state-sync-key"
            ? proto.Message.AppStateSyncKeyData.fromObject(value as Record<string, unknown>)
            : value
        ) as SignalDataTypeMap[T];
      }
      return found;
    },
    async set(data: SignalDataSet) {
      const keys: Record<string, Json> = {};
      for (const [type, entries] of Object.entries(data)) {
        for (const [id, value] of Object.entries(entries ?? {})) {
          const key = `${type}:${id}`;
          if (value === null || value === undefined) {
            stored.delete(key);
            keys[key] = null;
          } else {
            const json = toJson(value);
            stored.set(key, json);
            keys[key] = json;
          }
        }
      }
      if (Object.keys(keys).length > 0) await persist({ keys });
    },
  };
}

/** Baileys closes with a Boom; its HTTP-like status code is the `DisconnectReason`. */
function statusCodeOf(error: unknown): number {
  if (typeof error === "object" && error !== null && "output" in error) {
    const output = (error as { output?: { statusCode?: unknown } }).output;
    if (typeof output?.statusCode === "number") return output.statusCode;
  }
  return DisconnectReason.connectionClosed;
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message.slice(0, 512) : "connection closed";
}

function meOf(creds: AuthenticationCreds): Me {
  const name = creds.me?.name ?? creds.me?.notify ?? creds.me?.verifiedName;
  return { id: creds.me?.id ?? "", ...(name ? { name: name.slice(0, 256) } : {}) };
}

export function baileysNetwork(options: BaileysNetworkOptions = {}): WhatsAppNetwork {
  return {
    simulated: false,
    open({ auth, handlers }: OpenOptions): WhatsAppSocket {
      const creds: AuthenticationCreds =
        auth.creds === null ? initAuthCreds() : (fromJson(auth.creds) as AuthenticationCreds);
      const keys = makeCacheableSignalKeyStore(
        makeWriteThroughKeyStore(auth.keys, (update) => handlers.persistAuth(update)),
        silentLogger,
      );
      // Set by close(): after it the owner expects silence, whatever Baileys still emits while ending.
      let silenced = false;

      const sock = makeWASocket({
        auth: { creds, keys },
        logger: silentLogger,
        browser: Browsers.ubuntu("Switchboard"),
        // Phone notifications keep working, and a gateway has no use for years of history.
        markOnlineOnConnect: false,
        syncFullHistory: false,
        // No `version`: the bundled one. Fetching the latest needs the internet on every start.
        ...(options.waWebSocketUrl ? { waWebSocketUrl: options.waWebSocketUrl } : {}),
        ...(options.connectTimeoutMs ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
      });

      // Baileys merges each partial update into `creds` in its own listener, registered before this
      // one, so the whole (merged) creds object is what gets stored.
      sock.ev.on("creds.update", () => {
        handlers.persistAuth({ creds: toJson(creds) }).catch(() => {
          // Rejected only when the session left this bridge; the socket is being closed anyway.
        });
      });

      sock.ev.on("connection.update", (update) => {
        if (silenced) return;
        if (update.qr) handlers.onQr(update.qr);
        if (update.connection === "connecting") handlers.onConnecting();
        else if (update.connection === "open") handlers.onOpen(meOf(creds));
        else if (update.connection === "close") {
          silenced = true;
          const error = update.lastDisconnect?.error;
          const code = statusCodeOf(error);
          handlers.onClose({
            code,
            reason: reasonOf(error),
            // 408 is also a plain connection timeout; before registration it means the QRs ran out.
            qrExpired: code === DisconnectReason.timedOut && !creds.registered,
            loggedOut: code === DisconnectReason.loggedOut,
          });
        }
      });

      return {
        requestPairingCode: (digits) => sock.requestPairingCode(digits),
        logout: () => sock.logout(),
        close() {
          if (silenced) return;
          silenced = true;
          // `end(undefined)` closes the WebSocket without the logout stanza: the creds stay linked.
          sock.end(undefined).catch(() => {});
        },
      };
    },
  };
}
