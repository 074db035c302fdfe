/**
 * The real WhatsApp network: the seam (`seam.ts`) implemented over Baileys. This is the ONLY file that
 * imports `@whiskeysockets/baileys` (and pino, which Baileys needs as its logger), together with the
 * modules only it imports: mapping.ts (Baileys' shapes to ours), events.ts, receipts.ts, operations.ts
 * (`perform`), server-certificate.ts (the handshake check Baileys gets wrong) and their helpers. Everything else in the bridge, and every test but a few, runs without it.
 */

import type { Agent } from "node:https";
import {
  type AuthenticationCreds,
  type BaileysEventMap,
  Browsers,
  DEFAULT_CONNECTION_CONFIG,
  DisconnectReason,
  initAuthCreds,
  makeCacheableSignalKeyStore,
  proto,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
} from "@whiskeysockets/baileys";
import { pino } from "pino";
import type { NetworkEvent } from "../protocol/messaging.ts";
import type { AuthUpdate, Json, OpenOptions, WhatsAppNetwork, WhatsAppSocket } from "../protocol/seam.ts";
import { errorMessage, type Log, silentLog } from "../shared/log.ts";
import { Availability } from "./availability.ts";
import { BoundedMap, RecentSent } from "./caches.ts";
import { networkEvents } from "./events.ts";
import { GroupWatch } from "./group-watch.ts";
import { DEFAULT_HISTORY_LIMIT, type HistoryLimit } from "./history.ts";
import { fromJson, groupInfo, toJson } from "./mapping.ts";
import { downloadOptions, type MediaDownloads } from "./media-host.ts";
import { fetchOptionsWith, performOperation } from "./operations.ts";
import { meOf, OwnName } from "./own-name.ts";
import { isPollVote, pollRecordOf, pollVoteEvent, type VoteContext } from "./poll-votes.ts";
import { type ProxyAgents, ProxyError, parseProxyUrl, proxyAgents } from "./proxy.ts";
import { inOrderWithPhoneNumbers } from "./receipts.ts";
import { makeCheckedSocket, ServerCertificateRefused, WHATSAPP_ROOT_KEY } from "./server-certificate.ts";
import type { VersionBook } from "./version.ts";

export type {
  AuthUpdate,
  CloseInfo,
  Json,
  OpenOptions,
  SocketHandlers,
  WhatsAppNetwork,
  WhatsAppSocket,
} from "../protocol/seam.ts";
export { networkEvents } from "./events.ts";
export type { HistoryLimit } from "./history.ts";

export interface BaileysNetworkOptions extends MediaDownloads {
  /** Overrides WhatsApp's endpoint; tests point it at a local server so nothing leaves the machine. */
  waWebSocketUrl?: string;
  /** Which WhatsApp Web version to announce (pinned, fetched, the edge's last good, or Baileys' own). */
  versions?: VersionBook;
  connectTimeoutMs?: number;
  /** How much of the history the phone sends on pairing reaches the edge (default: 30 days, 100 a chat). */
  history?: HistoryLimit;
  /** The HTTPS agent for media uploads (Baileys' `fetchAgent`); tests trust the fake media host with it. */
  mediaAgent?: Agent;
  /** Where translation failures go (one odd message is skipped, not fatal). */
  log?: Log;
  /**
   * The root key the server's certificate chain must lead to: WhatsApp's own (pinned) unless given.
   * Only for a server that is not WhatsApp (the fake WhatsApp in tests: its own root).
   */
  rootKey?: Uint8Array;
}

// Baileys logs a lot at info level; the bridge logs what matters itself, one JSON line per event.
const silentLogger = pino({ level: "silent" });

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
  if (isDeviceRemoved(error)) return DisconnectReason.loggedOut;
  if (typeof error === "object" && error !== null && "output" in error) {
    const output = (error as { output?: { statusCode?: unknown } }).output;
    if (typeof output?.statusCode === "number") return output.statusCode;
  }
  return DisconnectReason.connectionClosed;
}

/**
 * The phone unlinked this device: WhatsApp ends the stream with `<conflict type="device_removed"/>`
 * (with code 401, which Baileys maps to loggedOut; without a code Baileys would say 440 "replaced").
 */
function isDeviceRemoved(error: unknown): boolean {
  if (typeof error !== "object" || error === null || !("data" in error)) return false;
  const data = (error as { data?: { tag?: unknown; attrs?: { type?: unknown } } }).data;
  return data?.tag === "conflict" && data.attrs?.type === "device_removed";
}

function reasonOf(error: unknown): string {
  // A dead proxy: Baileys wraps it as "WebSocket Error (…)"; the proxy's own words name what failed.
  const cause = typeof error === "object" && error !== null && "data" in error ? error.data : undefined;
  if (cause instanceof ProxyError) return cause.message.slice(0, 512);
  return error instanceof Error ? error.message.slice(0, 512) : "connection closed";
}

/** The socket error under Baileys' Boom (`data`), when the WebSocket itself failed. */
function systemErrorCode(error: unknown): string | null {
  if (typeof error !== "object" || error === null || !("data" in error)) return null;
  const data = (error as { data?: unknown }).data;
  if (typeof data !== "object" || data === null || !("code" in data)) return null;
  const code = (data as { code?: unknown }).code;
  return typeof code === "string" && code.startsWith("E") ? code : null;
}

/**
 * Whether a close means "WhatsApp was never reached": the WebSocket failed with a system error (DNS,
 * refused, reset, unreachable), or Baileys gave up (408) before WhatsApp said anything at all. Baileys
 * reports all of these as 408, the same code as "the QR codes ran out".
 */
export function isNetworkFailure(error: unknown, code: number, heardFromWhatsApp: boolean): boolean {
  if (systemErrorCode(error) !== null) return true;
  return code === DisconnectReason.timedOut && !heardFromWhatsApp;
}

/** The WhatsApp Web version the Baileys in use was released with. */
export function bundledVersion(): [number, number, number] {
  const [major = 2, minor = 3000, patch = 0] = DEFAULT_CONNECTION_CONFIG.version;
  return [major, minor, patch];
}

function socketUrlOf(options: BaileysNetworkOptions): string {
  return options.waWebSocketUrl ?? String(DEFAULT_CONNECTION_CONFIG.waWebSocketUrl);
}

/** The socket, uploads and downloads (media, history blobs: Baileys' `options`) through the proxy. */
function proxiedConfig(agents: ProxyAgents) {
  return {
    // Baileys types it for wss://; `ws` takes the plain http.Agent a ws:// server (the fake) needs.
    agent: agents.socket as Agent,
    fetchAgent: agents.uploads,
    options: fetchOptionsWith(agents.downloads),
  };
}

export function baileysNetwork(options: BaileysNetworkOptions = {}): WhatsAppNetwork {
  const log = options.log ?? silentLog;
  return {
    simulated: false,
    async refreshVersion(announced) {
      if (!options.versions) return false;
      await options.versions.refresh();
      return options.versions.differsFrom(announced);
    },
    open({ auth, handlers, lastGoodVersion, proxy }: OpenOptions): WhatsAppSocket {
      const version = options.versions?.forSession(lastGoodVersion ?? null);
      const agents = proxy ? proxyAgents(parseProxyUrl(proxy), socketUrlOf(options)) : null;
      const creds: AuthenticationCreds =
        auth.creds === null ? initAuthCreds() : (fromJson(auth.creds) as AuthenticationCreds);
      const keys = makeCacheableSignalKeyStore(
        makeWriteThroughKeyStore(auth.keys, (update) => handlers.persistAuth(update)),
        silentLogger,
      );
      // Set by close(): after it the owner expects silence, whatever Baileys still emits while ending.
      let silenced = false;
      // A QR, an open or a server's close reason: WhatsApp answered this socket's handshake.
      let heardFromWhatsApp = false;
      let qrShown = false;
      const groups = new GroupWatch(() => creds.me);
      const recentSent = new RecentSent();
      const context = {
        history: options.history ?? DEFAULT_HISTORY_LIMIT,
        knownLids: new BoundedMap<string, string>(5_000),
        // Known only once paired; receipts from the account's own devices are not a recipient's.
        get meLid() {
          return creds.me?.lid ?? "";
        },
        phoneOf: (jid: string) => groups.phoneOf(jid),
      };
      const failed = (what: string) => (error: unknown) => log("error", what, { error: errorMessage(error) });

      /** A resend request (retry receipt): recent own sends from memory, older ones from the edge. */
      async function getMessage(key: proto.IMessageKey): Promise<proto.IMessage | undefined> {
        if (!key.id) return undefined;
        const recent = recentSent.get(key.id);
        if (recent) return recent;
        const raw = await handlers.storedMessage?.(key.remoteJid ?? "", key.id).catch(() => null);
        if (!raw) return undefined;
        const stored = fromJson(raw) as { message?: proto.IMessage | null };
        return stored.message ?? undefined;
      }

      const checked = makeCheckedSocket(
        {
          auth: { creds, keys },
          logger: silentLogger,
          browser: Browsers.ubuntu("Switchboard"),
          // Phone notifications keep working, and a gateway has no use for years of history.
          markOnlineOnConnect: false,
          syncFullHistory: false,
          // Baileys applies app-state patches unchecked by default; a patch whose MACs do not verify
          // under the account's keys (tampered, or from a diverged state) is skipped instead.
          appStateMacVerification: { patch: true, snapshot: true },
          getMessage,
          cachedGroupMetadata: (jid) => groups.cache.forSend(jid, (group) => sock.groupMetadata(group)),
          ...(version ? { version: version.version } : {}),
          ...(options.waWebSocketUrl ? { waWebSocketUrl: options.waWebSocketUrl } : {}),
          ...(options.connectTimeoutMs ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
          ...(options.mediaAgent ? { fetchAgent: options.mediaAgent } : {}),
          ...(agents ? proxiedConfig(agents) : {}),
          ...downloadOptions(options, agents?.downloads),
        },
        options.rootKey ?? WHATSAPP_ROOT_KEY,
      );
      const sock = checked.sock;
      groups.listen(sock.ws);

      /** An update about a group we hold no metadata for: fetch it whole, so the edge can store it. */
      function fetchUnknownGroup(jid: string): void {
        sock.groupMetadata(jid).then((meta) => {
          if (silenced) return;
          groups.fetched(meta);
          handlers.onNetworkEvent({ kind: "groups", action: "upsert", groups: [groupInfo(meta)] });
        }, failed("could not fetch a changed group"));
      }

      function remember(events: Partial<BaileysEventMap>): void {
        for (const jid of groups.remember(events)) fetchUnknownGroup(jid);
        for (const message of events["messages.upsert"]?.messages ?? []) {
          if (message.key.fromMe) recentSent.remember(message.key.id, message.message);
        }
      }

      // Baileys merges each partial update into `creds` in its own listener, registered before this
      // one, so the whole (merged) creds object is what gets stored.
      const availability = new Availability(
        (online) => sock.sendPresenceUpdate(online ? "available" : "unavailable"),
        () => Boolean(creds.me?.name),
      );
      const ownName = new OwnName((me) => handlers.onMe?.(me));
      sock.ev.on("creds.update", () => {
        if (!silenced) availability.credsChanged(failed("could not send the account's availability"));
        if (!silenced) ownName.credsChanged(meOf(creds));
        handlers.persistAuth({ creds: toJson(creds) }).catch(() => {
          // Rejected only when the session left this bridge; the socket is being closed anyway.
        });
      });

      // Receipts from a contact's LID are reported under its phone number (Baileys' LID mapping store).
      const deliver = inOrderWithPhoneNumbers(
        (lid) => sock.signalRepository.lidMapping.getPNForLID(lid),
        (event) => {
          if (!silenced) handlers.onNetworkEvent(event);
        },
      );
      // What a poll vote is decrypted with: the poll's record from memory, else the edge's copy.
      const votes: VoteContext = {
        own: {
          get pn() {
            return sock.user?.id ?? creds.me?.id ?? "";
          },
          get lid() {
            return sock.user?.lid ?? creds.me?.lid ?? "";
          },
        },
        pollRecord: async (chat, pollId) => {
          const recent = pollRecordOf(recentSent.get(pollId));
          if (recent) return recent;
          const raw = await handlers.storedMessage?.(chat, pollId).catch(() => null);
          return raw ? pollRecordOf((fromJson(raw) as { message?: unknown }).message) : null;
        },
        phoneNumberOf: (lid) => sock.signalRepository.lidMapping.getPNForLID(lid),
      };
      sock.ev.process((events) => {
        if (silenced) return;
        for (const message of events["messages.upsert"]?.messages ?? []) {
          if (!isPollVote(message)) continue;
          pollVoteEvent(message, votes).then(
            (event) => {
              if (!silenced) handlers.onNetworkEvent(event);
            },
            (error) =>
              log("warn", "poll vote could not be read", {
                voteId: message.key.id ?? null,
                error: errorMessage(error),
              }),
          );
        }
        const onError = failed("could not translate a WhatsApp event");
        let translated: NetworkEvent[] = [];
        try {
          remember(events);
          translated = networkEvents(events, creds.me?.id ?? "", onError, context);
        } catch (error) {
          onError(error);
        }
        deliver(translated);
      });

      sock.ev.on("connection.update", (update) => {
        if (silenced) return;
        // Fail closed: should a Baileys upgrade skip our look at the server's hello, nothing proceeds.
        if ((update.qr || update.connection === "open") && !checked.verified) {
          sock.end(new ServerCertificateRefused("it was never checked")).catch(() => {});
          return;
        }
        if (update.qr) {
          heardFromWhatsApp = true;
          qrShown = true;
          handlers.onQr(update.qr);
        }
        if (update.connection === "connecting") handlers.onConnecting();
        else if (update.connection === "open") {
          heardFromWhatsApp = true;
          ownName.opened(meOf(creds));
          handlers.onOpen(meOf(creds));
          // Groups the account is already in: WhatsApp sends no event for them. Baileys reports the
          // answer as `groups.update` with full metadata, which the event handler stores.
          sock.groupFetchAllParticipating().catch(failed("could not fetch the account's groups"));
        } else if (update.connection === "close") {
          silenced = true;
          const error = update.lastDisconnect?.error;
          const code = statusCodeOf(error);
          const networkError = isNetworkFailure(error, code, heardFromWhatsApp);
          handlers.onClose({
            code,
            reason: reasonOf(error),
            // 408 is also a plain connection timeout; it means the QRs ran out only after one was shown.
            qrExpired: code === DisconnectReason.timedOut && !creds.registered && qrShown && !networkError,
            loggedOut: code === DisconnectReason.loggedOut,
            networkError,
            certificateRefused: error instanceof ServerCertificateRefused,
          });
        }
      });

      return {
        ...(version ? { version } : {}),
        requestPairingCode: (digits) => sock.requestPairingCode(digits),
        logout: () => sock.logout(),
        perform: (operation, media) => {
          if (operation.op === "availability") availability.want(operation.online);
          // A received file comes through the session's proxy, else the configured media dispatcher.
          const downloads = agents?.downloads ?? options.mediaDispatcher;
          return performOperation(sock, operation, media, silentLogger, downloads);
        },
        close() {
          if (silenced) return;
          silenced = true;
          agents?.downloads.close().catch(() => {});
          // `end(undefined)` closes the WebSocket without the logout stanza: the creds stay linked.
          sock.end(undefined).catch(() => {});
        },
      };
    },
  };
}
