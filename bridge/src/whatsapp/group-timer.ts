/**
 * A group's disappearing-messages timer, changed by any member: WhatsApp sends a `w:gp2` notification
 * (`ephemeral expiration=…` or `not_ephemeral`), which Baileys 7.0.0-rc14 turns into a
 * `protocolMessage` EPHEMERAL_SETTING in the group's chat and records only on the chat, never as
 * `groups.update`. Reported here as the group's change, so the stored group (and `group.update`)
 * follow it.
 */
import { isJidGroup, proto, type WAMessage } from "@whiskeysockets/baileys";
import type { NetworkEvent } from "../protocol/messaging.ts";

export function groupTimerEvents(messages: readonly WAMessage[]): NetworkEvent[] {
  return messages.flatMap((message): NetworkEvent[] => {
    const jid = message.key.remoteJid;
    const protocol = message.message?.protocolMessage;
    if (!jid || !isJidGroup(jid) || protocol?.type !== proto.Message.ProtocolMessage.Type.EPHEMERAL_SETTING) {
      return [];
    }
    const ephemeral = Math.max(0, Number(protocol.ephemeralExpiration ?? 0));
    return [{ kind: "groups", action: "update", groups: [{ jid, ephemeral }] }];
  });
}
