/**
 * History sync on pairing: right after a newly linked device logs in for the first time, the phone
 * sends it the recent chats as a `protocolMessage` of type HISTORY_SYNC_NOTIFICATION, end-to-end
 * encrypted from the account's own primary device (device 0). WhatsApp puts small initial bootstraps
 * inline (`initialHistBootstrapInlinePayload`, a zlib-deflated `HistorySync`), which Baileys 7 inflates
 * itself (`Utils/history.js`), so no media server is needed.
 */
import { randomBytes } from "node:crypto";
import { deflateSync } from "node:zlib";
import { proto } from "@whiskeysockets/baileys";
import { FakeContact } from "./contact.ts";
import type { FakeDevice } from "./device.ts";
import { type Companion, companionBundle } from "./directory.ts";
import { uploadHistory } from "./history-media.ts";
import { type FakeWhatsApp, type LinkedDevice, SERVER_JID } from "./server.ts";

export interface HistoryMessage {
  text: string;
  fromMe: boolean;
  /** Epoch seconds. */
  timestamp: number;
  /** Group messages: who wrote it (a phone JID). */
  participant?: string;
  pushName?: string;
  id?: string;
}

export interface HistoryChat {
  /** A phone JID, a `@lid` or a group. */
  jid: string;
  name?: string;
  /** For a `@lid` chat: the phone number behind it (WhatsApp sends it as `pnJid`). */
  pnJid?: string;
  /** For a phone chat: its LID (`lidJid`). */
  lidJid?: string;
  /** Newest first, as WhatsApp sends them. */
  messages: HistoryMessage[];
}

function webMessage(chat: HistoryChat, message: HistoryMessage): proto.IWebMessageInfo {
  return {
    key: {
      remoteJid: chat.jid,
      fromMe: message.fromMe,
      id: message.id ?? randomBytes(10).toString("hex").toUpperCase(),
      ...(message.participant ? { participant: message.participant } : {}),
    },
    message: { conversation: message.text },
    messageTimestamp: message.timestamp,
    ...(message.pushName ? { pushName: message.pushName } : {}),
    status: message.fromMe ? proto.WebMessageInfo.Status.READ : proto.WebMessageInfo.Status.DELIVERY_ACK,
  };
}

/** One chunk of a history sync: its type and either conversations or (PUSH_NAME) contacts' names. */
export interface HistoryChunk {
  syncType: "INITIAL_BOOTSTRAP" | "RECENT" | "FULL" | "PUSH_NAME";
  chats?: HistoryChat[];
  /** PUSH_NAME: the names contacts gave themselves, by phone JID. */
  pushNames?: Array<{ jid: string; name: string }>;
  /** Progress of the whole sync in percent after this chunk. */
  progress?: number;
  /** The blob on the media host is corrupted after upload (a media-host chunk only). */
  tamper?: boolean;
}

/** The `HistorySync` WhatsApp builds: conversations with their messages, or push names. */
export function historySyncOf(chunk: HistoryChunk, chunkOrder = 0): proto.IHistorySync {
  const chats = chunk.chats ?? [];
  return {
    syncType: proto.HistorySync.HistorySyncType[chunk.syncType],
    chunkOrder,
    progress: chunk.progress ?? 100,
    pushnames: (chunk.pushNames ?? []).map(({ jid, name }) => ({ id: jid, pushname: name })),
    conversations: chats.map((chat) => ({
      id: chat.jid,
      ...(chat.name ? { name: chat.name } : {}),
      ...(chat.pnJid ? { pnJid: chat.pnJid } : {}),
      ...(chat.lidJid ? { lidJid: chat.lidJid } : {}),
      conversationTimestamp: Math.max(0, ...chat.messages.map((message) => message.timestamp)),
      messages: chat.messages.map((message) => ({ message: webMessage(chat, message) })),
    })),
  };
}

/** The inline bootstrap's `HistorySync` bytes (INITIAL_BOOTSTRAP of `chats`). */
export function historySync(chats: HistoryChat[]): Uint8Array {
  return proto.HistorySync.encode(historySyncOf({ syncType: "INITIAL_BOOTSTRAP", chats })).finish();
}

type Send = (companion: Companion, message: proto.IMessage, attrs: Record<string, string>) => Promise<string>;

/** A message from `device` to a companion, Signal-encrypted (`pkmsg` until it has answered); its id. */
async function sendFrom(
  server: FakeWhatsApp,
  device: FakeDevice,
  companion: Companion,
  message: proto.IMessage,
  attrs: Record<string, string>,
): Promise<string> {
  if (!(await device.peer.hasSession(companion.jid))) {
    await device.peer.startSession(companion.jid, companionBundle(companion));
  }
  const { type, ciphertext } = await device.peer.encrypt(companion.jid, message);
  const id = randomBytes(10).toString("hex").toUpperCase();
  server.deliver(companion.jid, {
    tag: "message",
    attrs: { id, t: String(Math.floor(Date.now() / 1000)), ...attrs },
    content: [{ tag: "enc", attrs: { v: "2", type }, content: ciphertext }],
  });
  return id;
}

/**
 * The account's phone as a Signal party of its own (device 0 of the account), so that what it sends the
 * companion is really encrypted and arrives `fromMe`, as peer messages do.
 */
export class PhoneDevice {
  private readonly send: Send;

  /**
   * `pushName` is the account's name: WhatsApp puts it (`notify`) on every message the phone sends,
   * which is how a companion without app-state sync learns its own name (Baileys' `creds.me.name`).
   * `device`: FakePhone's `device`, to send as the account's own device 0 (the identity the server
   * hands out for it, which Baileys also opens a session with); without it, a Signal party of its own.
   */
  constructor(
    private readonly server: FakeWhatsApp,
    readonly phoneNumber: string,
    readonly pushName = "phone",
    device?: FakeDevice,
  ) {
    if (device)
      this.send = (companion, message, attrs) => sendFrom(server, device, companion, message, attrs);
    else {
      const contact = new FakeContact(server, phoneNumber, pushName);
      this.send = async (companion, message, attrs) =>
        (await contact.sendMessage(companion, message, attrs)).id;
    }
  }

  /** Sends the history sync notification with the chats inline; waits for the device's pre-keys first. */
  async sendHistory(device: LinkedDevice, chats: HistoryChat[]): Promise<string> {
    return (await this.sendHistoryChunks(device, [{ syncType: "INITIAL_BOOTSTRAP", chats }]))[0] ?? "";
  }

  /**
   * Sends a history sync in chunks, in order (`chunkOrder`), as real phones do: a first INITIAL_BOOTSTRAP
   * inline, every other chunk encrypted on the media host (history-media.ts) with only its keys and
   * hashes in the notification. Answers each notification's message id.
   */
  async sendHistoryChunks(device: LinkedDevice, chunks: HistoryChunk[]): Promise<string[]> {
    await waitForPreKeys(device);
    const ids: string[] = [];
    for (const [order, chunk] of chunks.entries()) {
      const sync = historySyncOf(chunk, order);
      const notification: proto.Message.IHistorySyncNotification = {
        syncType: sync.syncType ?? null,
        chunkOrder: order,
        progress: sync.progress ?? null,
        ...(order === 0 && chunk.syncType === "INITIAL_BOOTSTRAP"
          ? { initialHistBootstrapInlinePayload: deflateSync(proto.HistorySync.encode(sync).finish()) }
          : await uploadHistory(await this.server.messaging.enableMedia(), sync, { tamper: chunk.tamper })),
      };
      const id = await this.notify(device, notification);
      ids.push(id);
      // Each chunk is a pkmsg until the companion answers: the next waits for this one's receipt, or
      // Baileys may open two of them at once against the same one-time pre-key.
      await this.acknowledged(device, id);
    }
    return ids;
  }

  private async acknowledged(device: LinkedDevice, id: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.server.offline.waitingFor(device.jid).some((node) => node.attrs.id === id)) {
      if (Date.now() > deadline) throw new Error(`${device.jid} did not acknowledge ${id}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  private async notify(device: LinkedDevice, notification: proto.Message.IHistorySyncNotification) {
    return this.send(
      device,
      {
        protocolMessage: {
          type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
          historySyncNotification: notification,
        },
      },
      { from: `${this.phoneNumber}@${SERVER_JID}`, type: "text", category: "peer", notify: this.pushName },
    );
  }

  /** As WhatsApp does: the history of `chats` goes to each newly linked device on its first login. */
  sendHistoryOnPairing(chats: HistoryChat[], onSent: (id: string) => void = () => {}): void {
    this.sendHistoryChunksOnPairing([{ syncType: "INITIAL_BOOTSTRAP", chats }], onSent);
  }

  /** The same in chunks (`sendHistoryChunks`); `onSent` gets each notification's id. */
  sendHistoryChunksOnPairing(chunks: HistoryChunk[], onSent: (id: string) => void = () => {}): void {
    this.server.loginHooks.push((device, first) => {
      if (!first || !device.jid.startsWith(`${this.phoneNumber}:`)) return;
      this.sendHistoryChunks(device, chunks).then(
        (ids) => {
          for (const id of ids) onSent(id);
        },
        (error: unknown) => {
          throw error;
        },
      );
    });
  }
}

/** Baileys uploads its one-time pre-keys right after `success`; a session needs one of them. */
async function waitForPreKeys(device: LinkedDevice, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (device.preKeys.size === 0) {
    if (Date.now() > deadline) throw new Error(`${device.jid} uploaded no pre-keys`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
