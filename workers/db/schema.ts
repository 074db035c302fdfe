import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * D1 schema. Timestamps are integer milliseconds since the epoch; responses render them as ISO-8601.
 * Secrets never live here in plaintext: passwords are PBKDF2 hashes, tokens and keys SHA-256 hex digests.
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

export type UserRow = typeof users.$inferSelect;
