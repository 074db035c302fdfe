/**
 * A fake user's device (a contact's phone, the account's own phone): it holds a Signal identity
 * (signal-peer.ts) and decrypts what the server routes to it, one `message` stanza at a time.
 */
import {
  type BinaryNode,
  isJidGroup,
  isJidStatusBroadcast,
  type KeyPair,
  type proto,
} from "@whiskeysockets/baileys";
import { SignalPeer } from "./signal-peer.ts";

/** A `message` stanza as routed to one device: the `enc` nodes meant for it, and the sending device. */
export interface Delivery {
  stanza: BinaryNode;
  /** The device JID that sent it (the sending connection), which names its Signal session. */
  sender: string;
  encs: BinaryNode[];
}

export type ChatState = "composing" | "recording" | "paused";

/** A chat state (typing…) the server showed this device (chat-states.ts), and when (epoch ms). */
export interface ChatStateSeen {
  from: string;
  state: ChatState;
  at: number;
}

/** A message this device decrypted. */
export interface Received {
  id: string;
  /** The stanza's `to`: this user's own JID for one-to-one messages, the group's JID in a group. */
  chat: string;
  sender: string;
  /** The Signal types it came as, in order (`pkmsg`, `msg`, `skmsg`). */
  types: string[];
  message: proto.IMessage;
  /** The text, whether sent as `conversation` or `extendedTextMessage` (Baileys sends the latter). */
  text: string | undefined;
  /** When the server handed it to this device (epoch ms). */
  at: number;
}

const encType = (node: BinaryNode): "pkmsg" | "msg" | "skmsg" => {
  const type = node.attrs.type;
  if (type === "pkmsg" || type === "msg" || type === "skmsg") return type;
  throw new Error(`unknown enc type ${type}`);
};

export class FakeDevice {
  readonly peer: SignalPeer;
  readonly inbox: Received[] = [];
  /** Stanzas it could not decrypt, as `<id>: <error>`: a test expects none. */
  readonly failures: string[] = [];
  /** The chat states (typing, recording, paused) the server showed this device (chat-states.ts). */
  readonly chatStates: ChatStateSeen[] = [];
  /**
   * Told of each one-to-one message it could not decrypt (its id and sender), as a phone then asks the
   * sender to send it again (a retry receipt: contact.ts).
   */
  onUndecryptable: ((id: string, sender: string) => void) | undefined;

  constructor(
    readonly id: number,
    identity?: KeyPair,
  ) {
    this.peer = new SignalPeer(identity);
  }

  async receive({ stanza, sender, encs }: Delivery): Promise<void> {
    const id = stanza.attrs.id ?? "";
    const chat = stanza.attrs.to ?? "";
    const at = Date.now();
    try {
      const message: proto.IMessage = {};
      for (const enc of encs) {
        if (!(enc.content instanceof Uint8Array)) throw new Error("enc without ciphertext");
        Object.assign(message, await this.decrypt(chat, sender, encType(enc), enc.content));
      }
      const text = message.conversation ?? message.extendedTextMessage?.text ?? undefined;
      this.inbox.push({ id, chat, sender, types: encs.map(encType), message, text, at });
    } catch (error) {
      this.failures.push(`${id}: ${error instanceof Error ? error.message : String(error)}`);
      if (!encs.some((enc) => encType(enc) === "skmsg")) this.onUndecryptable?.(id, sender);
    }
  }

  private async decrypt(chat: string, sender: string, type: "pkmsg" | "msg" | "skmsg", body: Uint8Array) {
    if (type === "skmsg") {
      // Status posts (`status@broadcast`) go out like group messages: a sender key for the audience.
      if (!isJidGroup(chat) && !isJidStatusBroadcast(chat))
        throw new Error("skmsg outside a group or status");
      return this.peer.decryptGroup(chat, sender, body);
    }
    const message = await this.peer.decrypt(sender, type, body);
    // The sender key travels inside a one-to-one message; the group message itself follows.
    const distribution = message.senderKeyDistributionMessage;
    if (distribution) await this.peer.acceptSenderKey(sender, distribution);
    return message;
  }
}
