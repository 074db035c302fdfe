import type { Content, MessageRef, MessageStatus, WireMessage } from "../../../bridge/src/protocol/messaging";
import type { Json } from "../../../bridge/src/protocol/seam";

/**
 * Messages in the SessionDO's SQLite (storing one also creates or bumps its chat's row). Every write
 * is keyed by (chat, id), so an event the bridge delivers twice, or an own send that also comes back
 * from the network, is stored once.
 */

export const MESSAGE_TYPES = {
  text: "TEXT",
  image: "IMAGE",
  video: "VIDEO",
  audio: "AUDIO",
  document: "DOCUMENT",
  sticker: "STICKER",
  poll: "POLL",
  location: "LOCATION",
  contacts: "CONTACT",
  reaction: "REACTION",
  unknown: "UNKNOWN",
} as const satisfies Record<Content["type"], string>;
export type MessageType = (typeof MESSAGE_TYPES)[keyof typeof MESSAGE_TYPES];

export type MessageRow = {
  n: number;
  chat: string;
  id: string;
  sender: string;
  from_me: number;
  push_name: string | null;
  type: MessageType;
  content: string;
  body: string | null;
  quoted_id: string | null;
  status: MessageStatus | null;
  timestamp: number;
  edited_at: number | null;
  deleted_at: number | null;
  starred: number;
  reactions: string | null;
  raw: string | null;
  media_ref: string | null;
  /** A poll's votes (polls.ts); null on anything else and on a poll nobody voted on. */
  poll_votes: string | null;
};

/** Statuses only move forward (a late SERVER_ACK must not undo a READ); FAILED can come any time. */
const STATUS_RANK: Record<MessageStatus, number> = { PENDING: 1, SENT: 2, DELIVERED: 3, READ: 4, FAILED: 5 };

/** The human-readable text of a message: what search matches and what a chat list previews. */
export function bodyOf(content: Content): string | null {
  switch (content.type) {
    case "text":
      return content.text;
    case "image":
    case "video":
      return content.caption ?? null;
    case "document":
      return content.caption ?? content.fileName;
    case "poll":
      return content.question;
    case "location":
      return content.name ?? `${content.latitude},${content.longitude}`;
    case "contacts":
      return content.contacts.map((contact) => contact.displayName).join(", ");
    case "reaction":
      return content.emoji;
    case "unknown":
      return content.description;
    default:
      return null;
  }
}

export const hasMedia = (content: Content): boolean =>
  ["image", "video", "audio", "document", "sticker"].includes(content.type);

const isChatListed = (chat: string) => chat !== "status@broadcast";

export interface UpsertResult {
  /** False when the message was already stored (a duplicate delivery). */
  inserted: boolean;
  /** A stored message's status moved forward (a receipt Baileys folded into the message). */
  statusMoved: boolean;
  row: MessageRow;
}

export function upsertMessage(sql: SqlStorage, message: WireMessage, countUnread: boolean): UpsertResult {
  const existing = findMessage(sql, message.chat, message.id);
  if (existing) {
    const statusMoved = message.status ? setStatus(sql, message.chat, message.id, message.status) : false;
    if (message.raw !== undefined && existing.raw === null) {
      sql.exec("UPDATE messages SET raw = ? WHERE n = ?", JSON.stringify(message.raw), existing.n);
    }
    return { inserted: false, statusMoved, row: findMessage(sql, message.chat, message.id) ?? existing };
  }
  sql.exec(
    `INSERT INTO messages (chat, id, sender, from_me, push_name, type, content, body, quoted_id, status,
       timestamp, raw) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    message.chat,
    message.id,
    message.sender,
    message.fromMe ? 1 : 0,
    message.pushName ?? null,
    MESSAGE_TYPES[message.content.type],
    JSON.stringify(message.content),
    bodyOf(message.content),
    message.quotedId ?? null,
    message.status ?? (message.fromMe ? "SENT" : null),
    message.timestamp,
    message.raw === undefined ? null : JSON.stringify(message.raw),
  );
  if (message.content.type === "reaction") applyReaction(sql, message);
  else if (isChatListed(message.chat)) touchChat(sql, message, countUnread && !message.fromMe);
  const row = findMessage(sql, message.chat, message.id);
  if (!row) throw new Error("message vanished after insert");
  return { inserted: true, statusMoved: false, row };
}

function touchChat(sql: SqlStorage, message: WireMessage, unread: boolean): void {
  sql.exec(
    `INSERT INTO chats (jid, name, last_message_at, unread) VALUES (?, ?, ?, ?)
     ON CONFLICT (jid) DO UPDATE SET
       last_message_at = max(coalesce(last_message_at, 0), excluded.last_message_at),
       unread = unread + excluded.unread,
       name = coalesce(chats.name, excluded.name)`,
    message.chat,
    message.fromMe || message.chat.endsWith("@g.us") ? null : (message.pushName ?? null),
    message.timestamp,
    unread ? 1 : 0,
  );
}

/** A reaction is stored as a message and also folded into its target's `reactions` map. */
function applyReaction(sql: SqlStorage, message: WireMessage): void {
  if (message.content.type !== "reaction") return;
  const target = findMessage(sql, message.chat, message.content.targetId);
  if (!target) return;
  const reactions = target.reactions ? (JSON.parse(target.reactions) as Record<string, string>) : {};
  if (message.content.emoji === "") delete reactions[message.sender];
  else reactions[message.sender] = message.content.emoji;
  sql.exec("UPDATE messages SET reactions = ? WHERE n = ?", JSON.stringify(reactions), target.n);
}

export function findMessage(sql: SqlStorage, chat: string, id: string): MessageRow | null {
  return (
    sql.exec<MessageRow>("SELECT * FROM messages WHERE chat = ? AND id = ?", chat, id).toArray()[0] ?? null
  );
}

export function findMessageById(sql: SqlStorage, id: string): MessageRow | null {
  return (
    sql.exec<MessageRow>("SELECT * FROM messages WHERE id = ? ORDER BY n DESC LIMIT 1", id).toArray()[0] ??
    null
  );
}

/** Returns true when the status moved (so a webhook is due). */
export function setStatus(sql: SqlStorage, chat: string, id: string, status: MessageStatus): boolean {
  const row = findMessage(sql, chat, id);
  if (!row) return false;
  if (row.status && STATUS_RANK[row.status] >= STATUS_RANK[status]) return false;
  sql.exec("UPDATE messages SET status = ? WHERE n = ?", status, row.n);
  return true;
}

export function markEdited(sql: SqlStorage, chat: string, id: string, text: string, at: number): boolean {
  const row = findMessage(sql, chat, id);
  if (!row) return false;
  const content = JSON.parse(row.content) as Content;
  const edited: Content =
    content.type === "image" || content.type === "video" || content.type === "document"
      ? { ...content, caption: text }
      : { type: "text", text };
  sql.exec(
    "UPDATE messages SET content = ?, body = ?, edited_at = ? WHERE n = ?",
    JSON.stringify(edited),
    bodyOf(edited),
    at,
    row.n,
  );
  return true;
}

/** `keepContent` (the antiDelete setting) keeps what was said; otherwise the text is wiped. */
export function markDeleted(
  sql: SqlStorage,
  chat: string,
  id: string,
  at: number,
  keepContent: boolean,
): boolean {
  const row = findMessage(sql, chat, id);
  if (!row || row.deleted_at !== null) return false;
  if (keepContent) sql.exec("UPDATE messages SET deleted_at = ? WHERE n = ?", at, row.n);
  else {
    const wiped: Content = { type: "unknown", description: "deleted" };
    sql.exec(
      "UPDATE messages SET deleted_at = ?, content = ?, body = NULL, raw = NULL WHERE n = ?",
      at,
      JSON.stringify(wiped),
      row.n,
    );
  }
  return true;
}

export function setStarred(sql: SqlStorage, row: MessageRow, starred: boolean): void {
  sql.exec("UPDATE messages SET starred = ? WHERE n = ?", starred ? 1 : 0, row.n);
}

export function attachMedia(sql: SqlStorage, row: MessageRow, ref: string): void {
  sql.exec("UPDATE messages SET media_ref = ? WHERE n = ?", ref, row.n);
}

/** What an operation needs to point at a stored message (quote, react, edit, forward, download). */
export function refOf(row: MessageRow): MessageRef {
  return {
    id: row.id,
    chat: row.chat,
    fromMe: row.from_me === 1,
    sender: row.sender,
    timestamp: row.timestamp,
    content: JSON.parse(row.content) as Content,
    ...(row.raw ? { raw: JSON.parse(row.raw) as Json } : {}),
  };
}

// ── Reading ─────────────────────────────────────────────────────────────────────────────────────

export interface Page<T> {
  items: T[];
  /** Pass as `before` for the next (older) page; null when there is nothing older. */
  nextCursor: string | null;
}

/** A position in a chat's timeline: the message's time, then its insertion order for ties. */
export interface Cursor {
  timestamp: number;
  n: number;
}

export const formatCursor = (row: Pick<MessageRow, "timestamp" | "n">) => `${row.timestamp}.${row.n}`;

export function parseCursor(text: string): Cursor | null {
  const match = /^(\d{1,15})\.(\d{1,15})$/.exec(text);
  return match ? { timestamp: Number(match[1]), n: Number(match[2]) } : null;
}

/**
 * Newest `limit` messages of a chat before `before`, returned oldest → newest. Ordered by the
 * message's own time, so history that arrives late (a sync after a reconnect) lands where it belongs.
 */
export function history(
  sql: SqlStorage,
  chat: string,
  limit: number,
  before: Cursor | null,
): Page<MessageRow> {
  const rows = sql
    .exec<MessageRow>(
      `SELECT * FROM messages WHERE chat = ? AND type != 'REACTION'
         AND (? IS NULL OR timestamp < ? OR (timestamp = ? AND n < ?))
       ORDER BY timestamp DESC, n DESC LIMIT ?`,
      chat,
      before?.timestamp ?? null,
      before?.timestamp ?? null,
      before?.timestamp ?? null,
      before?.n ?? null,
      limit + 1,
    )
    .toArray();
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  const oldest = page[page.length - 1];
  return { items: page.reverse(), nextCursor: more && oldest ? formatCursor(oldest) : null };
}

export interface SearchQuery {
  q?: string;
  jid?: string;
  type?: MessageType;
  fromMe?: boolean;
  page: number;
  limit: number;
}

export function search(sql: SqlStorage, query: SearchQuery): { items: MessageRow[]; total: number } {
  const where = ["type != 'REACTION'"];
  const params: SqlStorageValue[] = [];
  if (query.q) {
    // LIKE with an escape so `%` and `_` in the query match themselves.
    where.push("body LIKE ? ESCAPE '\\'");
    params.push(`%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  }
  if (query.jid) {
    where.push("chat = ?");
    params.push(query.jid);
  }
  if (query.type) {
    where.push("type = ?");
    params.push(query.type);
  }
  if (query.fromMe !== undefined) {
    where.push("from_me = ?");
    params.push(query.fromMe ? 1 : 0);
  }
  const clause = where.join(" AND ");
  const total = sql
    .exec<{ total: number }>(`SELECT count(*) AS total FROM messages WHERE ${clause}`, ...params)
    .one().total;
  const items = sql
    .exec<MessageRow>(
      `SELECT * FROM messages WHERE ${clause} ORDER BY timestamp DESC, n DESC LIMIT ? OFFSET ?`,
      ...params,
      query.limit,
      (query.page - 1) * query.limit,
    )
    .toArray();
  return { items, total };
}

export function lastMessage(sql: SqlStorage, chat: string): MessageRow | null {
  return (
    sql
      .exec<MessageRow>(
        "SELECT * FROM messages WHERE chat = ? AND type != 'REACTION' ORDER BY timestamp DESC, n DESC LIMIT 1",
        chat,
      )
      .toArray()[0] ?? null
  );
}

export function unreadMessages(sql: SqlStorage, chat: string, limit: number): MessageRow[] {
  return sql
    .exec<MessageRow>(
      "SELECT * FROM messages WHERE chat = ? AND from_me = 0 ORDER BY n DESC LIMIT ?",
      chat,
      limit,
    )
    .toArray();
}

export interface SessionCounts {
  contacts: number;
  messages: number;
  groups: number;
  autoReplies: number;
  scheduledMessages: number;
}

/** The Session resource's `_count`: what this object stores (scheduled = still pending). */
export function counts(sql: SqlStorage): SessionCounts {
  const count = (query: string) => sql.exec<{ c: number }>(query).one().c;
  return {
    contacts: count("SELECT count(*) AS c FROM contacts"),
    messages: count("SELECT count(*) AS c FROM messages WHERE type != 'REACTION'"),
    groups: count("SELECT count(*) AS c FROM groups"),
    autoReplies: count("SELECT count(*) AS c FROM auto_replies"),
    scheduledMessages: count("SELECT count(*) AS c FROM scheduled WHERE status = 'PENDING'"),
  };
}
