import { lastMessage, type MessageRow } from "../messages/store";

/**
 * The chats table: one row per conversation (name, unread count, archive, pin, mute). Storing a
 * message creates or bumps its chat's row (../messages/store.ts); the chat actions change it here.
 */

export type ChatRow = {
  jid: string;
  name: string | null;
  last_message_at: number | null;
  unread: number;
  archived: number;
  pinned: number;
  muted_until: number | null;
};

export function listChats(
  sql: SqlStorage,
  limit: number,
  offset: number,
): { chat: ChatRow; last: MessageRow | null }[] {
  const chats = sql
    .exec<ChatRow>(
      "SELECT * FROM chats ORDER BY pinned DESC, last_message_at DESC LIMIT ? OFFSET ?",
      limit,
      offset,
    )
    .toArray();
  return chats.map((chat) => ({ chat, last: lastMessage(sql, chat.jid) }));
}

export function findChat(sql: SqlStorage, jid: string): ChatRow | null {
  return sql.exec<ChatRow>("SELECT * FROM chats WHERE jid = ?", jid).toArray()[0] ?? null;
}

export function updateChat(
  sql: SqlStorage,
  jid: string,
  patch: Partial<Pick<ChatRow, "archived" | "pinned" | "muted_until" | "unread">>,
): void {
  sql.exec("INSERT OR IGNORE INTO chats (jid) VALUES (?)", jid);
  for (const [column, value] of Object.entries(patch)) {
    sql.exec(`UPDATE chats SET ${column} = ? WHERE jid = ?`, value ?? null, jid);
  }
}
