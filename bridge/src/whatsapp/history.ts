/**
 * History sync (`messaging-history.set`: what the phone sends a newly linked device, and later
 * on-demand batches) as network events. Old messages are reported with `live: false`: the edge stores
 * them in place in their chats, but they fire no `message.received` webhook, no bot reply, no read
 * receipt. Only what the limit allows is sent: a gateway needs recent context, not years of chats.
 */
import type { BaileysEventMap, WAMessage } from "@whiskeysockets/baileys";
import { isLidUser, isPnUser, jidNormalizedUser } from "@whiskeysockets/baileys";
import type { ContactInfo, NetworkEvent } from "../protocol/messaging.ts";
import { chunks, contactInfo, upsertEvent } from "./mapping.ts";

export interface HistoryLimit {
  /** Messages older than this many days are not kept; 0 keeps no history messages at all. */
  days: number;
  /** At most this many (the newest) messages per chat. */
  messagesPerChat: number;
}

export const DEFAULT_HISTORY_LIMIT: HistoryLimit = { days: 30, messagesPerChat: 100 };

type HistorySet = BaileysEventMap["messaging-history.set"];

const secondsOf = (message: WAMessage): number => {
  const t = message.messageTimestamp;
  if (t === null || t === undefined) return 0;
  return typeof t === "number" ? t : t.toNumber();
};

/** The newest `messagesPerChat` of each chat within `days`, oldest first overall. */
export function keptHistory(messages: WAMessage[], limit: HistoryLimit, nowMs = Date.now()): WAMessage[] {
  if (limit.days <= 0 || limit.messagesPerChat <= 0) return [];
  const oldest = nowMs / 1000 - limit.days * 86_400;
  const byChat = new Map<string, WAMessage[]>();
  for (const message of messages) {
    const chat = message.key.remoteJid;
    if (!chat || secondsOf(message) < oldest) continue;
    byChat.set(chat, [...(byChat.get(chat) ?? []), message]);
  }
  const kept = [...byChat.values()].flatMap((chat) =>
    chat.sort((a, b) => secondsOf(b) - secondsOf(a)).slice(0, limit.messagesPerChat),
  );
  return kept.sort((a, b) => secondsOf(a) - secondsOf(b));
}

const isPerson = (jid: string) => isPnUser(jid) || isLidUser(jid);

/** Each LID ↔ phone number pair WhatsApp told us, as a contact that carries both. */
export function lidContacts(mappings: ReadonlyArray<{ lid: string; pn: string }>): ContactInfo[] {
  return mappings.flatMap(({ lid, pn }) =>
    isLidUser(lid) && isPnUser(pn) ? [{ jid: jidNormalizedUser(pn), lid: jidNormalizedUser(lid) }] : [],
  );
}

function pairOfContact(contact: { id?: string; phoneNumber?: string }): Array<{ lid: string; pn: string }> {
  return contact.id && isLidUser(contact.id) && contact.phoneNumber && isPnUser(contact.phoneNumber)
    ? [{ lid: contact.id, pn: contact.phoneNumber }]
    : [];
}

export function historyEvents(
  history: HistorySet,
  meId: string,
  limit: HistoryLimit,
  onError: (error: unknown) => void,
): NetworkEvent[] {
  const out: NetworkEvent[] = [];
  // Contacts first, so a message's chat already has its name when it is stored.
  const contacts = [
    ...lidContacts(history.lidPnMappings ?? []),
    ...history.contacts
      .filter((contact) => contact.id && isPerson(contact.id))
      .flatMap((contact) => {
        const info = contactInfo(contact);
        return info ? [info] : [];
      }),
  ];
  for (const batch of chunks(contacts)) out.push({ kind: "contacts", contacts: batch });
  // History keys carry no `…Alt`: the sync's own pairs put a LID chat under its phone number, where
  // live messages from the same person (which do carry it) are stored.
  // (Baileys' event buffer drops `lidPnMappings` when it merges history sets; the contacts keep them.)
  const phoneOf = new Map(
    [...(history.lidPnMappings ?? []), ...history.contacts.flatMap(pairOfContact)].map(({ lid, pn }) => [
      jidNormalizedUser(lid),
      jidNormalizedUser(pn),
    ]),
  );
  const withPhone = (message: WAMessage): WAMessage => {
    const { remoteJid, participant } = message.key;
    const remoteJidAlt = remoteJid ? phoneOf.get(remoteJid) : undefined;
    const participantAlt = participant ? phoneOf.get(participant) : undefined;
    return {
      ...message,
      key: {
        ...message.key,
        ...(remoteJidAlt && !message.key.remoteJidAlt ? { remoteJidAlt } : {}),
        ...(participantAlt && !message.key.participantAlt ? { participantAlt } : {}),
      },
    };
  };
  for (const message of keptHistory(history.messages, limit)) {
    try {
      const event = upsertEvent(withPhone(message), false, meId);
      if (event) out.push(event);
    } catch (error) {
      onError(error);
    }
  }
  return out;
}
