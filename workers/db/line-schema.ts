import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { companies } from "./control-schema";
import { users } from "./foundation-schema";

/**
 * The company's line to its people (issue 28): each member's own WhatsApp number, verified with a code
 * the line sends, and what they want to hear about. docs/company-line.md.
 */

/**
 * What a member may choose to receive on their phone. `mentions` (issue 30): they were @-mentioned in
 * a comment or assigned an issue, the two notifications of their inbox.
 */
export const LINE_NOTICE_KINDS = [
  "approvals",
  "questions",
  "budget",
  "failed_runs",
  "digest",
  "mentions",
] as const;
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
      .default(sql`'["approvals","questions","budget","failed_runs","digest","mentions"]'`),
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

/**
 * What a notice is about: the thing an answer acts on. `notification`: a row of the member's inbox
 * (a mention, an assignment); an answer to it comments on its issue.
 */
export const LINE_NOTICE_SUBJECTS = [
  "approval",
  "question",
  "agent",
  "company",
  "budget_incident",
  "run",
  "digest",
  "notification",
] as const;
export type LineNoticeSubject = (typeof LINE_NOTICE_SUBJECTS)[number];

/**
 * queued: waiting for the line (disconnected, quiet hours, a member's rate limit); sent: on WhatsApp
 * (`waMessageId` set); dropped: no longer worth sending (decided meanwhile, member gone); failed: the
 * line refused it (`error`).
 */
export const LINE_NOTICE_STATUSES = ["queued", "sent", "dropped", "failed"] as const;
export type LineNoticeStatus = (typeof LINE_NOTICE_STATUSES)[number];

/**
 * One message the line sends one member about one thing. At most one per (member, subject, kind), so
 * a retried trigger never sends twice; `waMessageId` is how an answer (a quoted reply, a reaction, a
 * poll vote) finds the notice it answers.
 */
export const lineNotices = sqliteTable(
  "line_notices",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: LINE_NOTICE_KINDS }).notNull(),
    subjectType: text("subject_type", { enum: LINE_NOTICE_SUBJECTS }).notNull(),
    subjectId: text("subject_id").notNull(),
    /** The member's number it goes to (digits only), as verified when it was queued. */
    phone: text("phone").notNull(),
    text: text("text").notNull(),
    /** A poll's options exactly as sent (a vote names them by hash); null for a plain message. */
    pollOptions: text("poll_options", { mode: "json" }).$type<string[]>(),
    status: text("status", { enum: LINE_NOTICE_STATUSES }).notNull().default("queued"),
    /** Not before this (quiet hours, a rate limit). */
    notBefore: integer("not_before").notNull(),
    waMessageId: text("wa_message_id"),
    error: text("error"),
    createdAt: integer("created_at").notNull(),
    sentAt: integer("sent_at"),
  },
  (t) => [
    uniqueIndex("line_notices_once_uq").on(t.userId, t.subjectType, t.subjectId, t.kind),
    uniqueIndex("line_notices_wa_message_uq").on(t.companyId, t.waMessageId),
    index("line_notices_queue_idx").on(t.companyId, t.status, t.createdAt),
  ],
);

export type LineNoticeRow = typeof lineNotices.$inferSelect;

/**
 * Each inbound WhatsApp message the line has acted on (a vote, a reply, a reaction), by its WhatsApp
 * id: a redelivered or replayed message finds its row and changes nothing.
 */
export const lineAnswers = sqliteTable(
  "line_answers",
  {
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    waMessageId: text("wa_message_id").notNull(),
    noticeId: text("notice_id").references(() => lineNotices.id, { onDelete: "set null" }),
    /** The sender's number (digits only), whoever they turned out to be. */
    phone: text("phone").notNull(),
    /** applied, refused, already_decided, not_understood, ignored. */
    outcome: text("outcome").notNull(),
    detail: text("detail"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.companyId, t.waMessageId] })],
);
