import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { ACTOR_TYPES, companies } from "./control-schema";
import { users } from "./foundation-schema";
import { issueComments, issues } from "./issue-schema";

/** Why a person got a notification: named in a comment, or handed an issue. */
export const NOTIFICATION_KINDS = ["mention", "assigned"] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/**
 * A board user's notification inbox (issue 30): one row per event that concerns them, read only by
 * them. `actorType`/`actorId` say who caused it (resolved to a name when listed); `readAt` null is
 * unread. Rows go with their company, issue, comment or user.
 */
export const notifications = sqliteTable(
  "notifications",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: NOTIFICATION_KINDS }).notNull(),
    issueId: text("issue_id")
      .notNull()
      .references(() => issues.id, { onDelete: "cascade" }),
    commentId: text("comment_id").references(() => issueComments.id, { onDelete: "cascade" }),
    actorType: text("actor_type", { enum: ACTOR_TYPES }).notNull(),
    actorId: text("actor_id").notNull(),
    createdAt: integer("created_at").notNull(),
    readAt: integer("read_at"),
  },
  (t) => [
    index("notifications_user_created_idx").on(t.userId, t.createdAt),
    index("notifications_user_unread_idx").on(t.userId, t.readAt),
  ],
);

export type NotificationRow = typeof notifications.$inferSelect;
