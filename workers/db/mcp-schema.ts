import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { agents, companies } from "./control-schema";
import { sessions, users } from "./foundation-schema";

/**
 * What governs agents on WhatsApp through MCP (issue 27): the company's line (a session one of its
 * owners linked), the board's policy per WhatsApp tool, and the counters behind the daily cap and the
 * pacing of agents' sends. docs/mcp.md "Governance".
 */

/** How the board lets agents use a WhatsApp tool. */
export const MCP_TOOL_POLICIES = ["allowed", "ask_first", "off"] as const;
export type McpToolPolicy = (typeof MCP_TOOL_POLICIES)[number];

/**
 * The company's WhatsApp line: one session of the owner who linked it. Agents send and read through
 * it as that owner; it goes away with the company, the session or that user.
 */
export const companyLines = sqliteTable("company_lines", {
  companyId: text("company_id")
    .primaryKey()
    .references(() => companies.id, { onDelete: "cascade" }),
  /** The session's internal id. */
  sessionId: text("session_id")
    .notNull()
    .references(() => sessions.id, { onDelete: "cascade" }),
  linkedByUserId: text("linked_by_user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/** The board's MCP settings for its agents; no row means every default (mcp/governance/policy.ts). */
export const companyMcpSettings = sqliteTable("company_mcp_settings", {
  companyId: text("company_id")
    .primaryKey()
    .references(() => companies.id, { onDelete: "cascade" }),
  /** Tool name → policy, for the tools the board set; a tool not named keeps its default. */
  policies: text("policies", { mode: "json" }).$type<Record<string, McpToolPolicy>>().notNull(),
  /** Sends per agent per UTC day; null: the default. */
  dailySendCap: integer("daily_send_cap"),
  updatedByUserId: text("updated_by_user_id").references(() => users.id, { onDelete: "set null" }),
  updatedAt: integer("updated_at").notNull(),
});

/** WhatsApp messages each agent sent through MCP per UTC day (`YYYY-MM-DD`), for the daily cap. */
export const agentDailySends = sqliteTable(
  "agent_daily_sends",
  {
    agentId: text("agent_id")
      .notNull()
      .references(() => agents.id, { onDelete: "cascade" }),
    day: text("day").notNull(),
    count: integer("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.day] })],
);

/** When the next agent send on a session may go out (pacing: one agent cannot flood a number). */
export const lineSendSlots = sqliteTable("line_send_slots", {
  sessionId: text("session_id")
    .primaryKey()
    .references(() => sessions.id, { onDelete: "cascade" }),
  nextAt: integer("next_at").notNull(),
});

export type CompanyLineRow = typeof companyLines.$inferSelect;
