import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { users } from "./foundation-schema";

/** provider → model (or `*`) → USD per million tokens; the wire's ModelPrices (bridge/src/protocol/runner.ts). */
export type ModelPriceTable = Record<
  string,
  Record<string, { input: number; cachedInput?: number; output: number }>
>;

/**
 * Control-plane tables (companies of agents). Every row carries `company_id`, and every query is
 * scoped by it: an id from another company behaves exactly like an unknown id (404).
 * Timestamps are integer milliseconds; JSON columns hold objects the API returns as such.
 */

export const COMPANY_STATUSES = ["active", "paused", "archived"] as const;
/** `viewer` reads everything and changes nothing; `member` changes everything but the company itself and its members; `owner` all. */
export const MEMBERSHIP_ROLES = ["owner", "member", "viewer"] as const;
export const AGENT_STATUSES = [
  "pending_approval",
  "idle",
  "running",
  "paused",
  "error",
  "terminated",
] as const;
export const AGENT_ROLES = [
  "ceo",
  "cto",
  "cmo",
  "cfo",
  "security",
  "engineer",
  "designer",
  "pm",
  "qa",
  "devops",
  "researcher",
  "general",
] as const;
/**
 * How a runner runs an agent (bridge/src/runner/adapters): `claude_local` starts Claude Code and reads
 * its stream; `codex_local` starts Codex (`codex exec --json`); `gemini_local` starts Gemini CLI (`gemini -p … --output-format stream-json`); `opencode_local` starts OpenCode (`opencode run --format json`); `process` starts any command; coder_local and assistant_local are the older names of
 * `process`, kept for existing agents. `http` needs no runner: the edge POSTs a signed wake to
 * adapterConfig.url (workers/control/runs/http-adapter.ts).
 */
export const ADAPTER_TYPES = [
  "claude_local",
  "codex_local",
  "gemini_local",
  "opencode_local",
  "process",
  "coder_local",
  "assistant_local",
  "http",
] as const;
export const ISSUE_STATUSES = [
  "backlog",
  "todo",
  "in_progress",
  "in_review",
  "blocked",
  "done",
  "cancelled",
] as const;
/** Sorted most urgent first; the list endpoint orders by this rank. */
export const ISSUE_PRIORITIES = ["critical", "high", "medium", "low"] as const;
export const PROJECT_STATUSES = ["planned", "active", "paused", "completed", "cancelled"] as const;
export const GOAL_LEVELS = ["company", "team", "agent", "task"] as const;
export const GOAL_STATUSES = ["planned", "active", "achieved", "cancelled"] as const;
export const APPROVAL_TYPES = [
  "hire_agent",
  "approve_ceo_strategy",
  "budget_override_required",
  "request_board_approval",
  /** An agent's WhatsApp send held for the board (MCP governance, docs/mcp.md); sent once on approval. */
  "whatsapp_send",
] as const;
export const APPROVAL_STATUSES = [
  "pending",
  "revision_requested",
  "approved",
  "rejected",
  "cancelled",
] as const;
export const RUN_STATUSES = ["queued", "running", "succeeded", "failed", "cancelled", "timed_out"] as const;
export const ACTOR_TYPES = ["user", "agent", "system"] as const;

export type IssueStatus = (typeof ISSUE_STATUSES)[number];
export type IssuePriority = (typeof ISSUE_PRIORITIES)[number];
export type AgentStatus = (typeof AGENT_STATUSES)[number];
export type AgentRole = (typeof AGENT_ROLES)[number];
export type ActorType = (typeof ACTOR_TYPES)[number];
export type MembershipRole = (typeof MEMBERSHIP_ROLES)[number];
export type JsonObject = Record<string, unknown>;

const createdAt = () => integer("created_at").notNull();
const updatedAt = () => integer("updated_at").notNull();

export const companies = sqliteTable("companies", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  description: text("description"),
  status: text("status", { enum: COMPANY_STATUSES }).notNull(),
  /** Immutable after creation; unique across the instance because identifiers (`ACM-12`) are global. */
  issuePrefix: text("issue_prefix").notNull().unique(),
  /** Last issue number handed out; bumped in the same batch that inserts the issue. */
  issueCounter: integer("issue_counter").notNull().default(0),
  brandColor: text("brand_color"),
  logoAssetId: text("logo_asset_id"),
  budgetMonthlyCents: integer("budget_monthly_cents").notNull().default(0),
  spentMonthlyCents: integer("spent_monthly_cents").notNull().default(0),
  requireBoardApprovalForNewAgents: integer("require_board_approval_for_new_agents", { mode: "boolean" })
    .notNull()
    .default(true),
  /** At most this many of the company's runs execute at once (null: no cap); the rest wait queued, in order. */
  maxConcurrentRuns: integer("max_concurrent_runs"),
  /**
   * The company's prices per provider, USD per million tokens: provider → model (or `*`) → prices.
   * Runs are priced with them unless the agent set its own (PUT /companies/{id}/model-prices).
   */
  modelPrices: text("model_prices", { mode: "json" }).$type<ModelPriceTable>(),
  archivedAt: integer("archived_at"),
  /**
   * Who created it (null: created before this was recorded by no known user, or that user is gone).
   * A runner registered with `allCompanies` is attached to the companies its owner created, never to
   * ones its owner joined by invite (docs/decisions.md).
   */
  createdByUserId: text("created_by_user_id").references(() => users.id, { onDelete: "set null" }),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/** Board users of a company. The creator is its owner. */
export const companyMemberships = sqliteTable(
  "company_memberships",
  {
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role", { enum: MEMBERSHIP_ROLES }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.userId] }),
    index("company_memberships_user_idx").on(t.userId),
  ],
);

/** Uploaded binaries (logos); the bytes live in R2 under `r2Key`. */
export const companyAssets = sqliteTable(
  "company_assets",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    contentType: text("content_type").notNull(),
    byteSize: integer("byte_size").notNull(),
    r2Key: text("r2_key").notNull(),
    createdByUserId: text("created_by_user_id"),
    createdByAgentId: text("created_by_agent_id"),
    createdAt: createdAt(),
  },
  (t) => [index("company_assets_company_idx").on(t.companyId)],
);

export const agents = sqliteTable(
  "agents",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** lower(name): @-mentions match case-insensitively, so names are unique that way per company. */
    nameKey: text("name_key").notNull(),
    role: text("role", { enum: AGENT_ROLES }).notNull(),
    title: text("title"),
    icon: text("icon"),
    status: text("status", { enum: AGENT_STATUSES }).notNull(),
    pauseReason: text("pause_reason"),
    reportsTo: text("reports_to"),
    capabilities: text("capabilities"),
    adapterType: text("adapter_type", { enum: ADAPTER_TYPES }).notNull(),
    adapterConfig: text("adapter_config", { mode: "json" }).$type<JsonObject>().notNull(),
    runtimeConfig: text("runtime_config", { mode: "json" }).$type<JsonObject>().notNull(),
    /** Canonical company skill keys. */
    desiredSkills: text("desired_skills", { mode: "json" }).$type<string[]>().notNull(),
    budgetMonthlyCents: integer("budget_monthly_cents").notNull().default(0),
    spentMonthlyCents: integer("spent_monthly_cents").notNull().default(0),
    sourceIssueId: text("source_issue_id"),
    sourceIssueIds: text("source_issue_ids", { mode: "json" }).$type<string[]>().notNull(),
    lastHeartbeatAt: integer("last_heartbeat_at"),
    terminatedAt: integer("terminated_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("agents_company_idx").on(t.companyId),
    uniqueIndex("agents_company_name_key_uq").on(t.companyId, t.nameKey),
    index("agents_reports_to_idx").on(t.reportsTo),
    // One CEO per company. The handlers check it first for a clear 422; this index decides races.
    uniqueIndex("agents_one_ceo_uq").on(t.companyId).where(sql`role = 'ceo' AND status <> 'terminated'`),
  ],
);

/** Long-lived agent keys: only the SHA-256 of the key is stored; terminate revokes them all. */
export const agentApiKeys = sqliteTable(
  "agent_api_keys",
  {
    id: text("id").primaryKey(),
    agentId: text("agent_id")
      .notNull()
      .references(() => agents.id, { onDelete: "cascade" }),
    companyId: text("company_id").notNull(),
    name: text("name").notNull(),
    keyHash: text("key_hash").notNull().unique(),
    displayPrefix: text("display_prefix").notNull(),
    createdByUserId: text("created_by_user_id"),
    createdByAgentId: text("created_by_agent_id"),
    lastUsedAt: integer("last_used_at"),
    revokedAt: integer("revoked_at"),
    /** Set on a key minted for one heartbeat run: valid only while that run is running. */
    runId: text("run_id"),
    createdAt: createdAt(),
  },
  (t) => [index("agent_api_keys_agent_idx").on(t.agentId), index("agent_api_keys_run_idx").on(t.runId)],
);

export const agentConfigRevisions = sqliteTable(
  "agent_config_revisions",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    agentId: text("agent_id")
      .notNull()
      .references(() => agents.id, { onDelete: "cascade" }),
    /** patch | rollback | instructions_path | skills_sync */
    source: text("source").notNull(),
    changedKeys: text("changed_keys", { mode: "json" }).$type<string[]>().notNull(),
    beforeConfig: text("before_config", { mode: "json" }).$type<JsonObject>().notNull(),
    afterConfig: text("after_config", { mode: "json" }).$type<JsonObject>().notNull(),
    rolledBackFromRevisionId: text("rolled_back_from_revision_id"),
    createdByUserId: text("created_by_user_id"),
    createdByAgentId: text("created_by_agent_id"),
    createdAt: createdAt(),
  },
  (t) => [index("agent_config_revisions_agent_idx").on(t.agentId, t.createdAt)],
);

export const companySkills = sqliteTable(
  "company_skills",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    /** Canonical key, `<namespace>/<slug>`; what agents' desiredSkills store. */
    key: text("key").notNull(),
    slug: text("slug").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    /** SKILL.md body. */
    content: text("content"),
    source: text("source").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("company_skills_company_key_uq").on(t.companyId, t.key),
    index("company_skills_company_slug_idx").on(t.companyId, t.slug),
  ],
);

export const goals = sqliteTable(
  "goals",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    description: text("description"),
    level: text("level", { enum: GOAL_LEVELS }).notNull(),
    status: text("status", { enum: GOAL_STATUSES }).notNull(),
    parentId: text("parent_id"),
    ownerAgentId: text("owner_agent_id"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("goals_company_idx").on(t.companyId)],
);

export const projects = sqliteTable(
  "projects",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    status: text("status", { enum: PROJECT_STATUSES }).notNull(),
    /** The first of goalIds; kept on the row because the spec's Project shows a single goalId. */
    goalId: text("goal_id"),
    leadAgentId: text("lead_agent_id"),
    archivedAt: integer("archived_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("projects_company_idx").on(t.companyId)],
);

export const projectGoals = sqliteTable(
  "project_goals",
  {
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    goalId: text("goal_id")
      .notNull()
      .references(() => goals.id, { onDelete: "cascade" }),
    companyId: text("company_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.goalId] })],
);

export const projectWorkspaces = sqliteTable(
  "project_workspaces",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    cwd: text("cwd"),
    repoUrl: text("repo_url"),
    repoRef: text("repo_ref"),
    isPrimary: integer("is_primary", { mode: "boolean" }).notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("project_workspaces_project_idx").on(t.projectId)],
);

export const labels = sqliteTable(
  "labels",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    color: text("color"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("labels_company_name_uq").on(t.companyId, t.name)],
);

export type CompanyRow = typeof companies.$inferSelect;
export type AgentRow = typeof agents.$inferSelect;
export type ProjectRow = typeof projects.$inferSelect;
export type WorkspaceRow = typeof projectWorkspaces.$inferSelect;
export type GoalRow = typeof goals.$inferSelect;
