import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { users } from "./foundation-schema";

/**
 * WhatsApp bridges' credentials. Each bridge has its own, created by a SUPERADMIN and bound to one
 * bridge id: it opens the bridge link only as that id. The token is shown once and kept as a SHA-256
 * digest. Revoking keeps the row (who, when) and frees the id for a new credential.
 */
export const bridgeCredentials = sqliteTable("bridge_credentials", {
  /** The bridge id the credential is bound to (the bridge's BRIDGE_ID). */
  id: text("id").primaryKey(),
  tokenHash: text("token_hash").notNull().unique(),
  /** The token's first characters, so an operator can tell credentials apart. */
  tokenPrefix: text("token_prefix").notNull(),
  createdByUserId: text("created_by_user_id").references(() => users.id, { onDelete: "set null" }),
  createdAt: integer("created_at").notNull(),
  lastUsedAt: integer("last_used_at"),
  revokedAt: integer("revoked_at"),
});

export type BridgeCredentialRow = typeof bridgeCredentials.$inferSelect;
