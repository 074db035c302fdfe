import { BOT_CONFIG_DEFAULTS, type BotConfigInput } from "./bot";

/**
 * The SessionDO's copy of the session settings and bot configuration. The Worker owns them (D1) and
 * pushes every change here (SessionDO.configure); the object reads D1 only when it has no copy yet,
 * so an incoming message never waits on D1.
 */
export interface SessionSettings {
  readReceipts: boolean;
  rejectCalls: boolean;
  antiDelete: boolean;
  alwaysOnline: boolean;
  /** Minimum milliseconds between two sends (messages/pacing.ts); absent from copies made before it. */
  sendGapMs?: number;
  /** "typing…" shown this long before each send; absent from copies made before it. */
  typingMs?: number;
  /** Days received media stays in R2 (media/retention.ts; default 30). */
  mediaRetentionDays?: number;
}

/**
 * The bot's values the object needs. Not the remove.bg key: a credential the bot does not use stays
 * sealed in D1 (workers/gateway/sessions/remove-bg-key.ts) and is never copied here.
 */
export type BotConfigValues = Required<Omit<BotConfigInput, "removeBgApiKey">>;

/** Copies pushed before the key was left out held it in plaintext. */
const NEVER_COPIED = "removeBgApiKey";

export interface SessionConfigCopy {
  /** The public session id (slug): webhooks and bot replies name the session by it. */
  slug: string;
  /**
   * The owner's user id: what the owner set up runs without asking D1 who may operate the session.
   * Absent from copies pushed before it was added (then D1 is asked).
   */
  ownerId?: string;
  settings: SessionSettings;
  bot: BotConfigValues;
}

export const DEFAULT_SETTINGS: SessionSettings = {
  readReceipts: false,
  rejectCalls: false,
  antiDelete: false,
  alwaysOnline: false,
  sendGapMs: 0,
  typingMs: 0,
};

/**
 * What a settings push asks of the account's availability: true (show it online) or false (stop)
 * when `alwaysOnline` changed, else null. A first copy counts as a change from off.
 */
export function availabilityChange(
  before: SessionSettings | undefined,
  after: SessionSettings,
): boolean | null {
  const was = before?.alwaysOnline ?? false;
  return was === after.alwaysOnline ? null : after.alwaysOnline;
}

const SCHEMA = "CREATE TABLE IF NOT EXISTS config (k INTEGER PRIMARY KEY CHECK (k = 1), value TEXT NOT NULL)";

export const CONFIG_SCHEMA = [SCHEMA];

export function readConfigCopy(sql: SqlStorage): SessionConfigCopy | null {
  const row = sql.exec<{ value: string }>("SELECT value FROM config WHERE k = 1").toArray()[0];
  if (!row) return null;
  const copy = JSON.parse(row.value) as SessionConfigCopy;
  if (NEVER_COPIED in copy.bot) {
    // An old copy: the key goes from memory and from storage now, not at the next push.
    delete (copy.bot as Partial<Record<string, unknown>>)[NEVER_COPIED];
    writeConfigCopy(sql, copy);
  }
  return copy;
}

export function writeConfigCopy(sql: SqlStorage, copy: SessionConfigCopy): void {
  sql.exec("INSERT OR REPLACE INTO config (k, value) VALUES (1, ?)", JSON.stringify(copy));
}

type BotRow = Record<string, unknown>;

const BOOLEAN_COLUMNS = new Set([
  "enabled",
  "enable_sticker",
  "enable_video_sticker",
  "enable_ping",
  "enable_uptime",
]);
const JSON_COLUMNS = new Set([
  "bot_allowed_jids",
  "bot_blocked_jids",
  "auto_reply_allowed_jids",
  "auto_reply_blocked_jids",
]);

const camel = (column: string) => column.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

function botFromRow(row: BotRow | null): BotConfigValues {
  const { [NEVER_COPIED]: _credential, ...defaults } = BOT_CONFIG_DEFAULTS;
  const bot: Record<string, unknown> = { ...defaults };
  if (!row) return bot as BotConfigValues;
  for (const [column, value] of Object.entries(row)) {
    const key = camel(column);
    if (!(key in defaults)) continue;
    if (BOOLEAN_COLUMNS.has(column)) bot[key] = value === 1;
    else if (JSON_COLUMNS.has(column)) bot[key] = JSON.parse(String(value));
    else bot[key] = value;
  }
  return bot as BotConfigValues;
}

/** Builds the copy from D1 (used once per object, or after the copy was lost). */
export async function loadConfigFromD1(db: D1Database, sessionId: string): Promise<SessionConfigCopy> {
  const session = await db
    .prepare("SELECT session_id, user_id, config FROM sessions WHERE id = ?")
    .bind(sessionId)
    .first<{ session_id: string; user_id: string; config: string }>();
  const bot = await db
    .prepare("SELECT * FROM bot_configs WHERE session_id = ?")
    .bind(sessionId)
    .first<BotRow>();
  return {
    slug: session?.session_id ?? sessionId,
    ...(session ? { ownerId: session.user_id } : {}),
    settings: {
      ...DEFAULT_SETTINGS,
      ...(session ? (JSON.parse(session.config) as Partial<SessionSettings>) : {}),
    },
    bot: botFromRow(bot),
  };
}
