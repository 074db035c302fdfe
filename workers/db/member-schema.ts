import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { companies, MEMBERSHIP_ROLES } from "./control-schema";
import { sessions, users } from "./foundation-schema";

/**
 * Links that let a person join a company with a role: single use, expiring, revocable. Only the
 * token's SHA-256 is stored. Agent onboarding tokens are a different thing (`invite_tokens`).
 */
export const memberInvites = sqliteTable(
  "member_invites",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull().unique(),
    role: text("role", { enum: MEMBERSHIP_ROLES }).notNull(),
    /** Normalised e-mail the invite is bound to: only that person may use it, and may sign up with it. */
    email: text("email"),
    /** The owner's note telling pending invites apart ("Dana, design contractor"). */
    note: text("note"),
    expiresAt: integer("expires_at").notNull(),
    usedAt: integer("used_at"),
    usedByUserId: text("used_by_user_id").references(() => users.id, { onDelete: "set null" }),
    revokedAt: integer("revoked_at"),
    createdByUserId: text("created_by_user_id").references(() => users.id, { onDelete: "set null" }),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("member_invites_company_idx").on(t.companyId)],
);

export type MemberInviteRow = typeof memberInvites.$inferSelect;

/**
 * A user's scoped API keys (issue 27): besides their one full key (`api_keys`), any number of named
 * keys, each with scopes (a non-empty subset of core/scopes.ts's KEY_SCOPES), optionally limited to
 * one messaging session or one company, optionally expiring. Same format and Keyring shard as the
 * full key (auth/api-key-format.ts); only the SHA-256 is stored; revoking deletes the row.
 */
export const scopedApiKeys = sqliteTable(
  "scoped_api_keys",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    keyHash: text("key_hash").notNull().unique(),
    displayPrefix: text("display_prefix").notNull(),
    last4: text("last4").notNull(),
    /** JSON array of scopes. */
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    sessionId: text("session_id").references(() => sessions.id, { onDelete: "cascade" }),
    companyId: text("company_id").references(() => companies.id, { onDelete: "cascade" }),
    expiresAt: integer("expires_at"),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [index("scoped_api_keys_user_idx").on(t.userId)],
);

export type ScopedApiKeyRow = typeof scopedApiKeys.$inferSelect;
