import { integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { agents, type JsonObject } from "./control-schema";
import { heartbeatRuns, issues } from "./issue-schema";

/**
 * What the runner's adapters report beyond the raw log (issue 19): the CLI session an agent had on an
 * issue, resumed on its next wake for that issue, and each run's transcript as structured events.
 * Same conventions as control-schema.ts (ms timestamps, company_id on every row).
 */

/**
 * One CLI session per agent, issue and adapter type: the id the CLI gave it and the directory it was
 * made in (a CLI finds its sessions by directory). Replaced by each run that reports one, removed when
 * the CLI rejected it.
 */
export const agentTaskSessions = sqliteTable(
  "agent_task_sessions",
  {
    companyId: text("company_id").notNull(),
    agentId: text("agent_id")
      .notNull()
      .references(() => agents.id, { onDelete: "cascade" }),
    issueId: text("issue_id")
      .notNull()
      .references(() => issues.id, { onDelete: "cascade" }),
    adapterType: text("adapter_type").notNull(),
    sessionId: text("session_id").notNull(),
    cwd: text("cwd").notNull(),
    /** The run that reported it last. */
    runId: text("run_id"),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [uniqueIndex("agent_task_sessions_pk").on(t.agentId, t.issueId, t.adapterType)],
);

/** A run's transcript (bridge/src/protocol/transcript.ts), in order; bounded per run like its log. */
export const heartbeatRunEvents = sqliteTable(
  "heartbeat_run_events",
  {
    runId: text("run_id")
      .notNull()
      .references(() => heartbeatRuns.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    /** assistant | thinking | tool_call | tool_result | result | error | system | init */
    type: text("type").notNull(),
    /** The event without its type. */
    data: text("data", { mode: "json" }).$type<JsonObject>().notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("heartbeat_run_events_pk").on(t.runId, t.seq)],
);
