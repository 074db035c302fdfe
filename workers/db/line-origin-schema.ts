import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { companies } from "./control-schema";

/**
 * The address the company's dashboard was last reached at (scheme and host, no path), so a notice
 * queued where no request is at hand (a run failing inside the run dispatcher, the cron) can still
 * link to the dashboard with an absolute URL. Written on each request that queues notices and when an
 * owner links the line.
 */
export const lineOrigins = sqliteTable("line_origins", {
  companyId: text("company_id")
    .primaryKey()
    .references(() => companies.id, { onDelete: "cascade" }),
  origin: text("origin").notNull(),
  updatedAt: integer("updated_at").notNull(),
});
