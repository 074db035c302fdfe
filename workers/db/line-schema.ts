import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { companies } from "./control-schema";
import { users } from "./foundation-schema";

/**
 * The company's line to its people (issue 28): each member's own WhatsApp number, verified with a code
 * the line sends, and what they want to hear about. docs/company-line.md.
 */

/** What a member may choose to receive on their phone. */
export const LINE_NOTICE_KINDS = ["approvals", "questions", "budget", "failed_runs", "digest"] as const;
export type LineNoticeKind = (typeof LINE_NOTICE_KINDS)[number];

/**
 * One member's number on one company's line. `phone` is digits only, international form without `+`
 * (as WhatsApp JIDs carry it). Nothing is ever sent to a number until `verifiedAt` is set. The code
 * is kept as its SHA-256, with an expiry and a count of wrong tries.
 */
export const lineMembers = sqliteTable(
  "line_members",
  {
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    phone: text("phone").notNull(),
    verifiedAt: integer("verified_at"),
    codeHash: text("code_hash"),
    codeExpiresAt: integer("code_expires_at"),
    codeAttempts: integer("code_attempts").notNull().default(0),
    codeSentAt: integer("code_sent_at"),
    /** The kinds this member receives; every kind by default. */
    notify: text("notify", { mode: "json" })
      .$type<LineNoticeKind[]>()
      .notNull()
      .default(sql`'["approvals","questions","budget","failed_runs","digest"]'`),
    /** Quiet hours as minutes after local midnight [start, end) in `timeZone`; null for none. */
    quietStartMinute: integer("quiet_start_minute"),
    quietEndMinute: integer("quiet_end_minute"),
    /** An IANA time zone (Europe/Berlin). */
    timeZone: text("time_zone").notNull().default("UTC"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.userId] }),
    // An answer from a number must name one member: a verified number belongs to one member per company.
    uniqueIndex("line_members_verified_phone_uq")
      .on(t.companyId, t.phone)
      .where(sql`verified_at IS NOT NULL`),
    index("line_members_user_idx").on(t.userId),
  ],
);

export type LineMemberRow = typeof lineMembers.$inferSelect;
