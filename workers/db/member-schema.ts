import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { companies, MEMBERSHIP_ROLES } from "./control-schema";
import { users } from "./foundation-schema";

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
