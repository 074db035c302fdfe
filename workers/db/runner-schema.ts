import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { companies, type JsonObject } from "./control-schema";
import { users } from "./foundation-schema";

/**
 * Runners: machines that execute agent runs, registered by the people whose agents they run (like
 * self-hosted CI runners). A runner's token is shown once and kept as a SHA-256 digest. It serves the
 * companies listed in runner_companies, or with `all_companies` every company its owner owns; either
 * way only while its owner is an owner of that company (checked at every claim).
 */
export const runners = sqliteTable(
  "runners",
  {
    id: text("id").primaryKey(),
    ownerUserId: text("owner_user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    /** The token's first characters, so its owner can tell tokens apart. */
    tokenPrefix: text("token_prefix").notNull(),
    allCompanies: integer("all_companies", { mode: "boolean" }).notNull().default(false),
    /** What the runner reported when it last connected: slots, platform, Node version, adapters. */
    capabilities: text("capabilities", { mode: "json" }).$type<JsonObject>(),
    version: text("version"),
    /** Set while a link is open (the RunDispatcher writes it); null once the last link closed. */
    connectedAt: integer("connected_at"),
    lastSeenAt: integer("last_seen_at"),
    /** At most this many runs execute on the runner at once, whatever slots it asks for (null: its slots decide). */
    maxConcurrentRuns: integer("max_concurrent_runs"),
    createdAt: integer("created_at").notNull(),
    revokedAt: integer("revoked_at"),
  },
  (t) => [index("runners_owner_idx").on(t.ownerUserId)],
);

export const runnerCompanies = sqliteTable(
  "runner_companies",
  {
    runnerId: text("runner_id")
      .notNull()
      .references(() => runners.id, { onDelete: "cascade" }),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.runnerId, t.companyId] }),
    index("runner_companies_company_idx").on(t.companyId),
  ],
);

export type RunnerRow = typeof runners.$inferSelect;
