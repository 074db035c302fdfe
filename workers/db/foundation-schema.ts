import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * D1 tables of the foundation: users and their credentials, the messaging sessions' directory, bot
 * configs and webhooks (conventions in schema.ts).
 */

export const ROLES = ["SUPERADMIN", "OWNER", "STAFF"] as const;
export type Role = (typeof ROLES)[number];

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    /** Stored lower-cased so uniqueness and login are case-insensitive. */
    email: text("email").notNull().unique(),
    name: text("name").notNull(),
    image: text("image"),
    role: text("role", { enum: ROLES }).notNull(),
    /** `pbkdf2_sha256$<iterations>$<salt b64>$<hash b64>` — see workers/auth/passwords.ts. */
    passwordHash: text("password_hash").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("users_role_idx").on(t.role)],
);

/** Browser sessions behind the `web-auth.session-token` cookie. */
export const webSessions = sqliteTable(
  "web_sessions",
  {
    id: text("id").primaryKey(),
    tokenHash: text("token_hash").notNull().unique(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    expiresAt: integer("expires_at").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("web_sessions_user_idx").on(t.userId)],
);

/** One API key per user (the spec: generating again invalidates the previous key). */
export const apiKeys = sqliteTable("api_keys", {
  id: text("id").primaryKey(),
  userId: text("user_id")
    .notNull()
    .unique()
    .references(() => users.id, { onDelete: "cascade" }),
  keyHash: text("key_hash").notNull().unique(),
  displayPrefix: text("display_prefix").notNull(),
  last4: text("last4").notNull(),
  createdAt: integer("created_at").notNull(),
  lastUsedAt: integer("last_used_at"),
});

/**
 * Failed-login counters, one row per throttle key (`acct:<email>` or `ip:<address>`).
 * Rows are updated with single-statement upserts, which D1 applies atomically.
 */
export const loginThrottle = sqliteTable("login_throttle", {
  key: text("key").primaryKey(),
  failures: integer("failures").notNull().default(0),
  windowStartedAt: integer("window_started_at").notNull(),
  blockedUntil: integer("blocked_until").notNull().default(sql`0`),
});

/**
 * Security events about a user's own account (issue 25): a login lockout, for now. Shown to the user
 * at their next sign-in (`securityNotices` in the login answer), then marked seen.
 */
export const ACCOUNT_EVENT_KINDS = ["login_locked"] as const;
export type AccountEventKind = (typeof ACCOUNT_EVENT_KINDS)[number];

export const accountEvents = sqliteTable(
  "account_events",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ACCOUNT_EVENT_KINDS }).notNull(),
    details: text("details", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: integer("created_at").notNull(),
    seenAt: integer("seen_at"),
  },
  (t) => [index("account_events_user_idx").on(t.userId, t.createdAt)],
);

export type UserRow = typeof users.$inferSelect;

// ── Messaging sessions (directory rows; per-session data lives in each SessionDO) ─────────────

/** The spec's coarse status; `state` carries the finer lifecycle (see docs/sessions.md). */
export const SESSION_STATUSES = ["Connected", "Disconnected", "Connecting"] as const;
export const SESSION_STATES = [
  "stopped",
  "starting",
  "scan_qr",
  "connected",
  "reconnecting",
  /** WhatsApp could not be reached (DNS, refused, timed out): retried with backoff, reason in lastDisconnect. */
  "network_error",
  "logged_out",
  "failed",
] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];
export type SessionState = (typeof SESSION_STATES)[number];

export const sessions = sqliteTable(
  "sessions",
  {
    /** Internal id; also names the session's Durable Object. */
    id: text("id").primaryKey(),
    /** Public, URL-safe identifier used in paths (`/messages/{sessionId}/…`). */
    sessionId: text("session_id").notNull().unique(),
    name: text("name").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** Mirror of the SessionDO's lifecycle, written by the DO, for listings without a DO call each. */
    status: text("status", { enum: SESSION_STATUSES }).notNull(),
    state: text("state", { enum: SESSION_STATES }).notNull(),
    /** JSON of the linked account (`{id, name}`) once connected. */
    me: text("me"),
    /** JSON of the session settings (readReceipts, rejectCalls, …). */
    config: text("config").notNull().default("{}"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("sessions_user_idx").on(t.userId)],
);

/** Sessions shared with users other than the owner. */
/**
 * Who else may use a session: shares by e-mail (normalised), so sharing never reveals whether an
 * account exists; a user has the share's role while their e-mail matches. Viewers read; operators
 * also send and manage webhooks; deleting, logging out and re-sharing stay with the owner.
 */
export const SHARE_ROLES = ["viewer", "operator"] as const;
export type ShareRole = (typeof SHARE_ROLES)[number];

export const sessionAccess = sqliteTable(
  "session_access",
  {
    sessionId: text("session_id")
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    role: text("role", { enum: SHARE_ROLES }).notNull().default("operator"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.email] }), index("session_access_email_idx").on(t.email)],
);

export const ACCESS_MODES = ["OWNER", "SPECIFIC", "BLACKLIST", "ALL"] as const;

export const botConfigs = sqliteTable("bot_configs", {
  id: text("id").primaryKey(),
  sessionId: text("session_id")
    .notNull()
    .unique()
    .references(() => sessions.id, { onDelete: "cascade" }),
  enabled: integer("enabled", { mode: "boolean" }).notNull(),
  botMode: text("bot_mode", { enum: ACCESS_MODES }).notNull(),
  botAllowedJids: text("bot_allowed_jids", { mode: "json" }).$type<string[]>().notNull(),
  botBlockedJids: text("bot_blocked_jids", { mode: "json" }).$type<string[]>().notNull(),
  autoReplyMode: text("auto_reply_mode", { enum: ACCESS_MODES }).notNull(),
  autoReplyAllowedJids: text("auto_reply_allowed_jids", { mode: "json" }).$type<string[]>().notNull(),
  autoReplyBlockedJids: text("auto_reply_blocked_jids", { mode: "json" }).$type<string[]>().notNull(),
  botName: text("bot_name").notNull(),
  prefix: text("prefix").notNull(),
  enableSticker: integer("enable_sticker", { mode: "boolean" }).notNull(),
  enableVideoSticker: integer("enable_video_sticker", { mode: "boolean" }).notNull(),
  maxStickerDuration: integer("max_sticker_duration").notNull(),
  enablePing: integer("enable_ping", { mode: "boolean" }).notNull(),
  enableUptime: integer("enable_uptime", { mode: "boolean" }).notNull(),
  removeBgApiKey: text("remove_bg_api_key"),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

export type SessionRow = typeof sessions.$inferSelect;
export type BotConfigRow = typeof botConfigs.$inferSelect;

/**
 * Webhook endpoints. `sessionId` null: one of the owner's global webhooks, which receives every session
 * the owner has. The signing secret must stay usable for HMAC, so it is kept sealed rather than hashed
 * (never returned after creation); each SessionDO holds a copy of the endpoints that concern it,
 * pushed on every change.
 */
export const webhooks = sqliteTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    sessionId: text("session_id").references(() => sessions.id, { onDelete: "cascade" }),
    /**
     * Who created it (the owner, or someone the session is shared with): revoking that person's share
     * disables it. `user_id` is always the session's owner, whose messages it receives.
     */
    createdByUserId: text("created_by_user_id"),
    name: text("name").notNull(),
    url: text("url").notNull(),
    /**
     * The signing secret: sealed (`v1.<iv>.<ciphertext>`, AES-256-GCM under SECRETS_MASTER_KEY, bound to
     * `webhook:<id>`) when `secretSealed`, else a row from before sealing still in plaintext until the
     * cron seals it (workers/webhooks/secrets.ts).
     */
    secret: text("secret").notNull(),
    /** False only for rows stored before 0010: their secret is plaintext until sealed. */
    secretSealed: integer("secret_sealed", { mode: "boolean" }).notNull().default(false),
    /** JSON array of event names, or ["*"]. */
    events: text("events", { mode: "json" }).$type<string[]>().notNull(),
    isActive: integer("is_active", { mode: "boolean" }).notNull(),
    /** Why deliveries stopped on their own (410 Gone, 5 days of failures); null when the user chose. */
    disabledReason: text("disabled_reason"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("webhooks_user_idx").on(t.userId), index("webhooks_session_idx").on(t.sessionId)],
);

export type WebhookRow = typeof webhooks.$inferSelect;
