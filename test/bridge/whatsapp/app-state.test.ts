/**
 * Baileys' app-state events as network events: only archive, pin and mute of a chat update count (an
 * unread count alone is no `chat.update`), an unpin or unmute is stated, a star is `message.starred`,
 * labels on chats are kept and labels on single messages are not.
 */
import type { BaileysEventMap } from "@whiskeysockets/baileys";
import { describe, expect, it } from "vitest";
import { networkEvents } from "../../../bridge/src/whatsapp/events.ts";

const ME = "491511111111:4@s.whatsapp.net";
const PEER = "491700000001@s.whatsapp.net";
const of = (events: Partial<BaileysEventMap>) => networkEvents(events, ME);

describe("app-state events", () => {
  it("chat updates: archive, pin (a timestamp, or null when unpinned) and mute; nothing else", () => {
    expect(
      of({
        "chats.update": [
          { id: PEER, archived: true, pinned: 1_772_442_904, muteEndTime: 1_772_446_504_000 },
          { id: "491700000002@s.whatsapp.net", pinned: null, muteEndTime: null },
          { id: "491700000003@s.whatsapp.net", unreadCount: 2 },
        ],
      }),
    ).toEqual([
      { kind: "chat.update", jid: PEER, archived: true, pinned: true, mutedUntil: 1_772_446_504_000 },
      { kind: "chat.update", jid: "491700000002@s.whatsapp.net", pinned: false, mutedUntil: null },
    ]);
  });

  it("stars and chat labels; a label on a single message is left out", () => {
    expect(
      of({
        "messages.update": [
          { key: { remoteJid: PEER, id: "MSG1", fromMe: true }, update: { starred: false } },
          { key: { remoteJid: PEER, id: "MSG2", fromMe: false }, update: { status: 4 } },
        ],
        "labels.edit": { id: "4", name: "Paid", color: 25, deleted: false },
        "labels.association": {
          type: "add",
          association: { type: "label_message", chatId: PEER, messageId: "MSG1", labelId: "4" },
        },
      } as Partial<BaileysEventMap>),
    ).toEqual([
      { kind: "message.status", id: "MSG2", chat: PEER, status: "READ" },
      { kind: "message.starred", id: "MSG1", chat: PEER, fromMe: true, starred: false },
      { kind: "label.edit", label: { id: "4", name: "Paid", color: 19, deleted: false } },
    ]);
    expect(
      of({
        "labels.association": {
          type: "remove",
          association: { type: "label_jid", chatId: PEER, labelId: "4" },
        },
      } as Partial<BaileysEventMap>),
    ).toEqual([{ kind: "label.association", labelId: "4", chat: PEER, labeled: false }]);
  });
});
