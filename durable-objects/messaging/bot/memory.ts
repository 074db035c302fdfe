/**
 * What the bot remembers about its own sends, for two guards:
 * - echoes: the network may hand a bot reply back as a live own message (Baileys echoes own sends);
 *   in OWNER auto-reply mode that echo would otherwise trigger the bot again, forever;
 * - a per-chat rate: two bots answering each other (or a peer flooding commands) stop at a ceiling.
 */

export const BOT_MEMORY_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS bot_sent (
     chat TEXT NOT NULL, id TEXT NOT NULL, body TEXT, sent_at INTEGER NOT NULL, PRIMARY KEY (chat, id))`,
  "CREATE INDEX IF NOT EXISTS bot_sent_by_time ON bot_sent (sent_at)",
];

/** An own message with the text of a bot reply this recent is taken for that reply's echo. */
export const ECHO_WINDOW_MS = 15_000;
/** Bot sends per chat per minute; beyond it the bot stays quiet in that chat until the minute passes. */
export const BOT_SENDS_PER_MINUTE = 10;
const MINUTE_MS = 60_000;
const KEEP_MS = 10 * MINUTE_MS;

/** Recorded before the send, so an echo that overtakes the send's answer is still recognised. */
export function rememberBotSend(
  sql: SqlStorage,
  chat: string,
  id: string,
  body: string | null,
  now: number,
): void {
  sql.exec("DELETE FROM bot_sent WHERE sent_at < ?", now - KEEP_MS);
  sql.exec(
    "INSERT OR REPLACE INTO bot_sent (chat, id, body, sent_at) VALUES (?, ?, ?, ?)",
    chat,
    id,
    body,
    now,
  );
}

export interface SeenMessage {
  chat: string;
  id: string;
  fromMe: boolean;
  text: string | null;
}

export function isBotEcho(sql: SqlStorage, message: SeenMessage, now: number): boolean {
  const byId = sql
    .exec("SELECT 1 FROM bot_sent WHERE chat = ? AND id = ?", message.chat, message.id)
    .toArray().length;
  if (byId > 0) return true;
  if (!message.fromMe || message.text === null) return false;
  const byText = sql
    .exec(
      "SELECT 1 FROM bot_sent WHERE chat = ? AND body = ? AND sent_at >= ?",
      message.chat,
      message.text,
      now - ECHO_WINDOW_MS,
    )
    .toArray().length;
  return byText > 0;
}

export function overChatLimit(sql: SqlStorage, chat: string, now: number): boolean {
  const { n } = sql
    .exec<{ n: number }>(
      "SELECT count(*) AS n FROM bot_sent WHERE chat = ? AND sent_at >= ?",
      chat,
      now - MINUTE_MS,
    )
    .one();
  return n >= BOT_SENDS_PER_MINUTE;
}
