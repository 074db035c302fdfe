/**
 * A real Baileys client (`makeWASocket`) with in-memory auth, dialling the fake WhatsApp, and a record
 * of what it reported: QRs, connection states, and the status code it closed with.
 */

import {
  type AuthenticationCreds,
  Browsers,
  initAuthCreds,
  makeWASocket,
  type SignalKeyStore,
} from "@whiskeysockets/baileys";
import { pino } from "pino";
import { memoryKeyStore } from "../../fake-whatsapp/memory-keys.ts";

export interface MemoryAuth {
  creds: AuthenticationCreds;
  keys: SignalKeyStore;
  stored: Map<string, unknown>;
}

export function memoryAuth(): MemoryAuth {
  const stored = new Map<string, unknown>();
  const keys = memoryKeyStore(stored);
  return { creds: initAuthCreds(), keys, stored };
}

export interface ClientRecord {
  qrs: string[];
  states: string[];
  closeCode: number | undefined;
  sock: ReturnType<typeof makeWASocket>;
}

const logger = pino({ level: process.env.FAKE_WA_BAILEYS_LOG ?? "silent" });

function statusCodeOf(error: unknown): number | undefined {
  const output = (error as { output?: { statusCode?: unknown } } | undefined)?.output;
  return typeof output?.statusCode === "number" ? output.statusCode : undefined;
}

/** Opens one Baileys socket; Baileys merges `creds.update` into `auth.creds` itself. */
export function connectBaileys(url: string, auth: MemoryAuth): ClientRecord {
  const sock = makeWASocket({
    auth: { creds: auth.creds, keys: auth.keys },
    waWebSocketUrl: url,
    logger,
    browser: Browsers.ubuntu("Fake test"),
    connectTimeoutMs: 5_000,
    markOnlineOnConnect: false,
    syncFullHistory: false,
  });
  const record: ClientRecord = { qrs: [], states: [], closeCode: undefined, sock };
  sock.ev.on("connection.update", (update) => {
    if (update.qr) record.qrs.push(update.qr);
    if (update.connection) record.states.push(update.connection);
    if (update.connection === "close") record.closeCode = statusCodeOf(update.lastDisconnect?.error);
  });
  return record;
}
