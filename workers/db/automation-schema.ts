import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { agents, companies, type JsonObject, projects } from "./control-schema";
import { heartbeatRuns } from "./issue-schema";

/**
 * Control-plane automation (issue 7): run logs, routines and their triggers and runs, cost events,
 * secrets and invite tokens. Same conventions as control-schema.ts (ms timestamps, company_id on
 * every row, secrets only as ciphertext or SHA-256).
 */

const createdAt = () => integer("created_at").notNull();
const updatedAt = () => integer("updated_at").notNull();

export const ROUTINE_STATUSES = ["active", "paused", "archived"] as const;
export const CONCURRENCY_POLICIES = ["coalesce_if_active", "skip_if_active", "always_enqueue"] as const;
export const CATCH_UP_POLICIES = ["skip_missed", "enqueue_missed_with_cap"] as const;
export const TRIGGER_KINDS = ["schedule", "webhook", "api"] as const;
export const ROUTINE_RUN_STATUSES = ["issue_created", "coalesced", "skipped", "failed"] as const;
export const ROUTINE_RUN_SOURCES = ["schedule", "webhook", "api", "manual", "catch_up"] as const;

/** A run's output, in order; the runner streams it in chunks (bounded per run, see the dispatcher). */
export const heartbeatRunLogChunks = sqliteTable(
  "heartbeat_run_log_chunks",
  {
    runId: text("run_id")
      .notNull()
      .references(() => heartbeatRuns.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    /** stdout | stderr | system */
    stream: text("stream").notNull(),
    text: text("text").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("heartbeat_run_log_chunks_pk").on(t.runId, t.seq)],
);

export const routines = sqliteTable(
  "routines",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    description: text("description"),
    assigneeAgentId: text("assignee_agent_id")
      .notNull()
      .references(() => agents.id),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id),
    priority: text("priority").notNull(),
    status: text("status", { enum: ROUTINE_STATUSES }).notNull(),
    concurrencyPolicy: text("concurrency_policy", { enum: CONCURRENCY_POLICIES }).notNull(),
    catchUpPolicy: text("catch_up_policy", { enum: CATCH_UP_POLICIES }).notNull(),
    createdByUserId: text("created_by_user_id"),
    createdByAgentId: text("created_by_agent_id"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("routines_company_idx").on(t.companyId, t.createdAt)],
);

export const routineTriggers = sqliteTable(
  "routine_triggers",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    routineId: text("routine_id")
      .notNull()
      .references(() => routines.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: TRIGGER_KINDS }).notNull(),
    label: text("label"),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    /** schedule: 5-field cron and IANA zone; next_run_at is the next due minute (ms). */
    cronExpression: text("cron_expression"),
    timezone: text("timezone"),
    nextRunAt: integer("next_run_at"),
    lastFiredAt: integer("last_fired_at"),
    /** webhook: the public id in the fire URL, and the signing secret (AES-GCM ciphertext; see secrets). */
    publicId: text("public_id").unique(),
    secretCiphertext: text("secret_ciphertext"),
    replayWindowSec: integer("replay_window_sec"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("routine_triggers_routine_idx").on(t.routineId),
    index("routine_triggers_due_idx").on(t.kind, t.enabled, t.nextRunAt),
  ],
);

/** Signatures already accepted, so a replayed fire within the window answers 409. */
export const routineTriggerReplays = sqliteTable(
  "routine_trigger_replays",
  {
    triggerId: text("trigger_id")
      .notNull()
      .references(() => routineTriggers.id, { onDelete: "cascade" }),
    signature: text("signature").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("routine_trigger_replays_pk").on(t.triggerId, t.signature)],
);

export const routineRuns = sqliteTable(
  "routine_runs",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    routineId: text("routine_id")
      .notNull()
      .references(() => routines.id, { onDelete: "cascade" }),
    triggerId: text("trigger_id"),
    source: text("source", { enum: ROUTINE_RUN_SOURCES }).notNull(),
    status: text("status", { enum: ROUTINE_RUN_STATUSES }).notNull(),
    /** The execution issue created or coalesced into (null when skipped). */
    issueId: text("issue_id"),
    heartbeatRunId: text("heartbeat_run_id"),
    /** The due minute a schedule fire was for: with trigger_id, unique, so a minute fires once. */
    scheduledFor: integer("scheduled_for"),
    payload: text("payload", { mode: "json" }).$type<JsonObject>(),
    reason: text("reason"),
    createdAt: createdAt(),
  },
  (t) => [
    index("routine_runs_routine_idx").on(t.routineId, t.createdAt),
    uniqueIndex("routine_runs_due_minute_uq").on(t.triggerId, t.scheduledFor),
  ],
);

export const BILLING_TYPES = [
  "metered_api",
  "subscription_included",
  "subscription_overage",
  "credits",
  "fixed",
  "unknown",
] as const;

export const costEvents = sqliteTable(
  "cost_events",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    agentId: text("agent_id")
      .notNull()
      .references(() => agents.id),
    issueId: text("issue_id"),
    projectId: text("project_id"),
    heartbeatRunId: text("heartbeat_run_id"),
    provider: text("provider").notNull(),
    model: text("model"),
    billingType: text("billing_type", { enum: BILLING_TYPES }).notNull(),
    inputTokens: integer("input_tokens").notNull(),
    cachedInputTokens: integer("cached_input_tokens").notNull(),
    outputTokens: integer("output_tokens").notNull(),
    costCents: integer("cost_cents").notNull(),
    occurredAt: integer("occurred_at").notNull(),
    createdByUserId: text("created_by_user_id"),
    createdByAgentId: text("created_by_agent_id"),
    createdAt: createdAt(),
  },
  (t) => [
    index("cost_events_company_idx").on(t.companyId, t.occurredAt),
    index("cost_events_agent_idx").on(t.agentId, t.occurredAt),
    index("cost_events_project_idx").on(t.projectId, t.occurredAt),
  ],
);

export const companySecrets = sqliteTable(
  "company_secrets",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** [a-z0-9_.-], derived from the name when not given; unique per company. */
    key: text("key").notNull(),
    description: text("description"),
    latestVersion: integer("latest_version").notNull(),
    createdByUserId: text("created_by_user_id"),
    createdByAgentId: text("created_by_agent_id"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("company_secrets_key_uq").on(t.companyId, t.key)],
);

export const companySecretVersions = sqliteTable(
  "company_secret_versions",
  {
    secretId: text("secret_id")
      .notNull()
      .references(() => companySecrets.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    /** `v1.<iv b64>.<ciphertext b64>`: AES-256-GCM under SECRETS_MASTER_KEY, additional data = secret id. */
    ciphertext: text("ciphertext").notNull(),
    /** SHA-256 of the value, so "did it change?" needs no decryption. */
    valueSha256: text("value_sha256").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("company_secret_versions_pk").on(t.secretId, t.version)],
);

/** Single-use onboarding tokens for external agents (only the SHA-256 is stored). */
export const inviteTokens = sqliteTable(
  "invite_tokens",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull().unique(),
    expiresAt: integer("expires_at").notNull(),
    usedAt: integer("used_at"),
    createdByUserId: text("created_by_user_id"),
    createdByAgentId: text("created_by_agent_id"),
    createdAt: createdAt(),
  },
  (t) => [index("invite_tokens_company_idx").on(t.companyId)],
);

export type RoutineRow = typeof routines.$inferSelect;
export type RoutineTriggerRow = typeof routineTriggers.$inferSelect;
export type RoutineRunRow = typeof routineRuns.$inferSelect;
export type CostEventRow = typeof costEvents.$inferSelect;
export type CompanySecretRow = typeof companySecrets.$inferSelect;
export type InviteTokenRow = typeof inviteTokens.$inferSelect;
