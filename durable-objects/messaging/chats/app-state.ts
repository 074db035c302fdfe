import type { NetworkEvent } from "../../../bridge/src/protocol/messaging";
import type { SessionContext } from "../context";
import { findMessage, setStarred } from "../messages/store";
import { type ChatRow, findChat, updateChat } from "./store";

/**
 * What the account's devices keep in sync about chats and messages (WhatsApp's app state): archive,
 * pin, mute and stars, changed on the phone or echoed back from this session's own API calls. Each is
 * stored and announced (`chat.update`, `message.starred`).
 */

/** WhatsApp's "mute always" (-1) stored as a date no one will reach. */
export const MUTED_ALWAYS = Date.UTC(9999, 11, 31);

type ChatUpdate = Extract<NetworkEvent, { kind: "chat.update" }>;
type Starred = Extract<NetworkEvent, { kind: "message.starred" }>;

function chatPatch(event: ChatUpdate): Partial<Pick<ChatRow, "archived" | "pinned" | "muted_until">> {
  const patch: Partial<Pick<ChatRow, "archived" | "pinned" | "muted_until">> = {};
  if (event.archived !== undefined) patch.archived = event.archived ? 1 : 0;
  if (event.pinned !== undefined) patch.pinned = event.pinned ? 1 : 0;
  if (event.mutedUntil !== undefined) {
    patch.muted_until = event.mutedUntil === -1 ? MUTED_ALWAYS : event.mutedUntil;
  }
  return patch;
}

export function applyChatUpdate(ctx: SessionContext, event: ChatUpdate): void {
  updateChat(ctx.sql, event.jid, chatPatch(event));
  const chat = findChat(ctx.sql, event.jid);
  const mutedUntil = chat?.muted_until && chat.muted_until > ctx.now() ? chat.muted_until : null;
  ctx.emit("chat.update", {
    jid: event.jid,
    archived: chat?.archived === 1,
    pinned: chat?.pinned === 1,
    mutedUntil: mutedUntil === null ? null : new Date(mutedUntil).toISOString(),
  });
}

/** A star on a message the session has stored; one it never saw has nothing to mark. */
export function applyStarred(ctx: SessionContext, event: Starred): void {
  const row = findMessage(ctx.sql, event.chat, event.id);
  if (!row) return;
  setStarred(ctx.sql, row, event.starred);
  ctx.emit("message.starred", {
    keyId: event.id,
    remoteJid: event.chat,
    fromMe: event.fromMe,
    starred: event.starred,
  });
}
