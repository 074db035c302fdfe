/**
 * A companion's chat states on the fake server: Baileys' `sendPresenceUpdate("composing" | "recording"
 * | "paused", jid)` sends `<chatstate from to=<jid>><composing/></chatstate>` (`<composing
 * media=audio/>` for recording), and WhatsApp shows it to the person in that chat: it hands
 * `<chatstate from=<sender>>` to their devices, the sender named as the chat addressed them (number or
 * LID) and taken from the authenticated connection, not from the stanza's own `from`. Here the
 * recipient's fake devices record it (`FakeDevice.chatStates`). Chat states are not queued: a device
 * that is away misses them; a group's chat state is not relayed (logged).
 */
import type { BinaryNode } from "@whiskeysockets/baileys";
import { type Companion, type Directory, userOf } from "./directory.ts";
import type { ChatState } from "./presence.ts";

/** A chat state a device was shown, and when (epoch ms). */
export interface ChatStateSeen {
  from: string;
  state: ChatState;
  at: number;
}

export class ChatStateRelay {
  constructor(
    private readonly directory: Directory,
    private readonly companion: (jid: string) => Companion | undefined,
    private readonly log: (line: string) => void = () => {},
  ) {}

  /** Relays a companion's `<chatstate to>`; false for any other stanza. */
  handle(source: { jid: string | undefined }, node: BinaryNode): boolean {
    if (node.tag !== "chatstate" || !node.attrs.to || !source.jid) return false;
    const to = node.attrs.to;
    const sender = this.companion(source.jid);
    const target = this.directory.resolve(to);
    if (!sender || target?.kind !== "device") {
      this.log(`chatstate to ${to} not relayed`);
      return true;
    }
    const from = to.endsWith("@lid") ? `${userOf(sender.lid)}@lid` : `${userOf(sender.jid)}@s.whatsapp.net`;
    const seen = { from, state: stateOf(node), at: Date.now() };
    for (const device of target.account.devices.values()) device.chatStates.push(seen);
    return true;
  }
}

function stateOf(node: BinaryNode): ChatState {
  const child = Array.isArray(node.content) ? node.content[0] : undefined;
  if (child?.tag === "composing") return child.attrs.media === "audio" ? "recording" : "composing";
  return "paused";
}
