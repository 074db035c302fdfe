/**
 * App-state changes (what the account's devices keep in sync through WhatsApp's app-state patches) as
 * network events: a chat archived, pinned or muted (`chats.update`), a message starred
 * (`messages.update`), a label edited (`labels.edit`) or put on a chat (`labels.association`). They
 * come from the phone, and as Baileys' echo of this device's own patches (`emitOwnEvents`).
 */
import { type BaileysEventMap, type ChatUpdate, jidNormalizedUser } from "@whiskeysockets/baileys";
import type { NetworkEvent } from "../protocol/messaging.ts";

type ChatUpdateEvent = Extract<NetworkEvent, { kind: "chat.update" }>;

const MAX_LABEL_COLOR = 19;

/** Only the archive, pin and mute parts of a chat update; null when it has none of them. */
function chatUpdate(update: Partial<ChatUpdate>): ChatUpdateEvent | null {
  if (!update.id) return null;
  const event: ChatUpdateEvent = { kind: "chat.update", jid: jidNormalizedUser(update.id) };
  if (typeof update.archived === "boolean") event.archived = update.archived;
  // Baileys gives the pin's timestamp, or null when unpinned.
  if (update.pinned !== undefined) event.pinned = update.pinned !== null && update.pinned !== 0;
  if (update.muteEndTime !== undefined) {
    event.mutedUntil = update.muteEndTime === null ? null : Math.trunc(Number(update.muteEndTime));
  }
  const changed =
    event.archived !== undefined || event.pinned !== undefined || event.mutedUntil !== undefined;
  return changed ? event : null;
}

function starEvents(events: Partial<BaileysEventMap>): NetworkEvent[] {
  const out: NetworkEvent[] = [];
  for (const { key, update } of events["messages.update"] ?? []) {
    if (typeof update.starred !== "boolean" || !key.id || !key.remoteJid) continue;
    out.push({
      kind: "message.starred",
      id: key.id,
      chat: jidNormalizedUser(key.remoteJid),
      fromMe: key.fromMe === true,
      starred: update.starred,
    });
  }
  return out;
}

function labelEvents(events: Partial<BaileysEventMap>): NetworkEvent[] {
  const out: NetworkEvent[] = [];
  const edit = events["labels.edit"];
  if (edit?.id) {
    const color = Number.isInteger(edit.color) ? Math.min(Math.max(edit.color, 0), MAX_LABEL_COLOR) : 0;
    out.push({
      kind: "label.edit",
      label: { id: edit.id, name: (edit.name ?? "").slice(0, 100), color, deleted: edit.deleted === true },
    });
  }
  const association = events["labels.association"];
  // Labels on single messages have no place at the edge yet: chats only.
  if (association && association.association.type === "label_jid") {
    out.push({
      kind: "label.association",
      labelId: association.association.labelId,
      chat: jidNormalizedUser(association.association.chatId),
      labeled: association.type === "add",
    });
  }
  return out;
}

export function appStateEvents(events: Partial<BaileysEventMap>): NetworkEvent[] {
  const chats = (events["chats.update"] ?? []).map(chatUpdate).filter((event) => event !== null);
  return [...chats, ...starEvents(events), ...labelEvents(events)];
}
