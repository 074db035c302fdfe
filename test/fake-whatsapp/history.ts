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

/** The `HistorySync` blob WhatsApp builds: conversations with their messages, plus push names. */
export function historySync(chats: HistoryChat[]): Uint8Array {
  return proto.HistorySync.encode({
    syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP,
    progress: 100,
    conversations: chats.map((chat) => ({
      id: chat.jid,
      ...(chat.name ? { name: chat.name } : {}),
      ...(chat.pnJid ? { pnJid: chat.pnJid } : {}),
      ...(chat.lidJid ? { lidJid: chat.lidJid } : {}),
      conversationTimestamp: Math.max(0, ...chat.messages.map((message) => message.timestamp)),
      messages: chat.messages.map((message) => ({ message: webMessage(chat, message) })),
    })),
  }).finish();
}

/**
 * The account's phone as a Signal party of its own (device 0 of the account), so that what it sends the
 * companion is really encrypted and arrives `fromMe`, as peer messages do.
 */
export class PhoneDevice {
  private readonly signal: FakeContact;

  /**
   * `pushName` is the account's name: WhatsApp puts it (`notify`) on every message the phone sends,
   * which is how a companion without app-state sync learns its own name (Baileys' `creds.me.name`).
   */
  constructor(
    private readonly server: FakeWhatsApp,
    readonly phoneNumber: string,
    readonly pushName = "phone",
  ) {
    this.signal = new FakeContact(server, phoneNumber, pushName);
  }

  /** Sends the history sync notification with the chats inline; waits for the device's pre-keys first. */
  async sendHistory(device: LinkedDevice, chats: HistoryChat[]): Promise<string> {
    await waitForPreKeys(device);
    const notification: proto.Message.IHistorySyncNotification = {
      syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP,
      chunkOrder: 0,
      progress: 100,
      initialHistBootstrapInlinePayload: deflateSync(historySync(chats)),
    };
    const { id } = await this.signal.sendMessage(
      device,
      {
        protocolMessage: {
          type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
          historySyncNotification: notification,
        },
      },
      { from: `${this.phoneNumber}@${SERVER_JID}`, type: "text", category: "peer", notify: this.pushName },
    );
    return id;
  }

  /** As WhatsApp does: the history of `chats` goes to each newly linked device on its first login. */
  sendHistoryOnPairing(chats: HistoryChat[], onSent: (id: string) => void = () => {}): void {
    this.server.loginHooks.push((device, first) => {
      if (!first || !device.jid.startsWith(`${this.phoneNumber}:`)) return;
      this.sendHistory(device, chats).then(onSent, (error: unknown) => {
        throw error;
      });
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
