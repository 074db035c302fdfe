/**
 * The SessionDO's messaging tables. Every statement is idempotent and runs when the object wakes, so
 * a new column or table reaches existing objects without a separate migration step. Add, never alter.
 */
export const MESSAGING_SCHEMA = [
  // Messages, newest found by (chat, timestamp, n); `n` is the insertion order and the paging cursor.
  `CREATE TABLE IF NOT EXISTS messages (
     n INTEGER PRIMARY KEY AUTOINCREMENT,
     chat TEXT NOT NULL, id TEXT NOT NULL, sender TEXT NOT NULL, from_me INTEGER NOT NULL,
     push_name TEXT, type TEXT NOT NULL, content TEXT NOT NULL, body TEXT, quoted_id TEXT,
     status TEXT, timestamp INTEGER NOT NULL, edited_at INTEGER, deleted_at INTEGER,
     starred INTEGER NOT NULL DEFAULT 0, reactions TEXT, raw TEXT, media_ref TEXT,
     UNIQUE (chat, id))`,
  "CREATE INDEX IF NOT EXISTS messages_by_chat ON messages (chat, timestamp, n)",
  "CREATE INDEX IF NOT EXISTS messages_by_id ON messages (id)",
  `CREATE TABLE IF NOT EXISTS chats (
     jid TEXT PRIMARY KEY, name TEXT, last_message_at INTEGER, unread INTEGER NOT NULL DEFAULT 0,
     archived INTEGER NOT NULL DEFAULT 0, pinned INTEGER NOT NULL DEFAULT 0, muted_until INTEGER)`,
  "CREATE INDEX IF NOT EXISTS chats_by_recency ON chats (last_message_at)",
  // Webhook outbox: appended in the same transaction as the change; the webhooks dispatcher drains it.
  `CREATE TABLE IF NOT EXISTS outbox (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, event TEXT NOT NULL, data TEXT NOT NULL, created_at INTEGER NOT NULL)`,
  // Media the session holds in R2 (media/store.ts); `media_parts` keeps bytes stored here before R2.
  `CREATE TABLE IF NOT EXISTS media (
     ref TEXT PRIMARY KEY, kind TEXT NOT NULL, mimetype TEXT NOT NULL, file_name TEXT,
     size INTEGER NOT NULL, created_at INTEGER NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS media_parts (
     ref TEXT NOT NULL, part INTEGER NOT NULL, bytes BLOB NOT NULL, PRIMARY KEY (ref, part))`,
  // When media retention last swept (media/retention.ts).
  "CREATE TABLE IF NOT EXISTS media_sweep (k INTEGER PRIMARY KEY CHECK (k = 1), at INTEGER NOT NULL)",
  // WhatsApp's limits on the account as last announced, one row per part (limits/store.ts).
  "CREATE TABLE IF NOT EXISTS account_limits (part TEXT PRIMARY KEY, value TEXT NOT NULL)",
] as const;

export function ensureSchema(sql: SqlStorage, statements: readonly string[]): void {
  for (const statement of statements) sql.exec(statement);
}

/** A column added to a messaging table after the table first shipped. */
export interface AddedColumn {
  table: string;
  column: string;
  definition: string;
}

/**
 * SQLite has no ADD COLUMN IF NOT EXISTS: each column is added when the object finds it missing, so
 * objects created before it keep their rows (and see NULL, or the definition's default, in it).
 */
export function addMissingColumns(sql: SqlStorage, added: readonly AddedColumn[]): void {
  for (const { table, column, definition } of added) {
    const columns = sql.exec<{ name: string }>(`PRAGMA table_info(${table})`).toArray();
    if (!columns.some((c) => c.name === column))
      sql.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
  }
}
