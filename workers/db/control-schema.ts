import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { users } from "./schema";

/**
 * Control-plane tables (companies of agents). Every row carries `company_id`, and every query is
 * scoped by it: an id from another company behaves exactly like an unknown id (404).
 * Timestamps are integer milliseconds; JSON columns hold objects the API returns as such.
 */

export const COMPANY_STATUSES = ["active", "paused", "archived"] as const;
export const MEMBERSHIP_ROLES = ["owner", "member"] as const;
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
export const ADAPTER_TYPES = ["coder_local", "assistant_local"] as const;
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
export type ActorType = (typeof ACTOR_TYPES)[number];
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
  archivedAt: integer("archived_at"),
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
    createdAt: createdAt(),
  },
  (t) => [index("agent_api_keys_agent_idx").on(t.agentId)],
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

export const issues = sqliteTable(
  "issues",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    projectId: text("project_id"),
    goalId: text("goal_id"),
    parentId: text("parent_id"),
    issueNumber: integer("issue_number").notNull(),
    identifier: text("identifier").notNull().unique(),
    title: text("title").notNull(),
    description: text("description"),
    status: text("status", { enum: ISSUE_STATUSES }).notNull(),
    priority: text("priority", { enum: ISSUE_PRIORITIES }).notNull(),
    /** 0 = critical … 3 = low, so the list sorts with an index instead of a CASE expression. */
    priorityRank: integer("priority_rank").notNull(),
    assigneeAgentId: text("assignee_agent_id"),
    assigneeUserId: text("assignee_user_id"),
    createdByUserId: text("created_by_user_id"),
    createdByAgentId: text("created_by_agent_id"),
    startedAt: integer("started_at"),
    completedAt: integer("completed_at"),
    cancelledAt: integer("cancelled_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("issues_company_priority_idx").on(t.companyId, t.priorityRank, t.createdAt),
    index("issues_company_status_idx").on(t.companyId, t.status),
    index("issues_assignee_agent_idx").on(t.assigneeAgentId, t.status),
    index("issues_assignee_user_idx").on(t.assigneeUserId),
    index("issues_parent_idx").on(t.parentId),
    index("issues_project_idx").on(t.projectId),
  ],
);

export const issueLabels = sqliteTable(
  "issue_labels",
  {
    issueId: text("issue_id")
      .notNull()
      .references(() => issues.id, { onDelete: "cascade" }),
    labelId: text("label_id")
      .notNull()
      .references(() => labels.id, { onDelete: "cascade" }),
    companyId: text("company_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.issueId, t.labelId] }), index("issue_labels_label_idx").on(t.labelId)],
);

export const issueComments = sqliteTable(
  "issue_comments",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    issueId: text("issue_id")
      .notNull()
      .references(() => issues.id, { onDelete: "cascade" }),
    authorAgentId: text("author_agent_id"),
    authorUserId: text("author_user_id"),
    body: text("body").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("issue_comments_issue_idx").on(t.issueId, t.createdAt),
    // The Mine inbox asks "which issues did this user comment on".
    index("issue_comments_author_user_idx").on(t.authorUserId, t.issueId),
  ],
);

export const issueDocuments = sqliteTable(
  "issue_documents",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    issueId: text("issue_id")
      .notNull()
      .references(() => issues.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    title: text("title"),
    format: text("format").notNull(),
    latestBody: text("latest_body").notNull(),
    latestRevisionId: text("latest_revision_id").notNull(),
    latestRevisionNumber: integer("latest_revision_number").notNull(),
    createdByUserId: text("created_by_user_id"),
    createdByAgentId: text("created_by_agent_id"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("issue_documents_issue_key_uq").on(t.issueId, t.key)],
);

export const issueDocumentRevisions = sqliteTable(
  "issue_document_revisions",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    documentId: text("document_id").notNull(),
    issueId: text("issue_id")
      .notNull()
      .references(() => issues.id, { onDelete: "cascade" }),
    revisionNumber: integer("revision_number").notNull(),
    title: text("title"),
    body: text("body").notNull(),
    changeSummary: text("change_summary"),
    createdByUserId: text("created_by_user_id"),
    createdByAgentId: text("created_by_agent_id"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("issue_document_revisions_doc_number_uq").on(t.documentId, t.revisionNumber)],
);

export const approvals = sqliteTable(
  "approvals",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    type: text("type", { enum: APPROVAL_TYPES }).notNull(),
    status: text("status", { enum: APPROVAL_STATUSES }).notNull(),
    payload: text("payload", { mode: "json" }).$type<JsonObject>().notNull(),
    requestedByAgentId: text("requested_by_agent_id"),
    requestedByUserId: text("requested_by_user_id"),
    decisionNote: text("decision_note"),
    decidedByUserId: text("decided_by_user_id"),
    decidedAt: integer("decided_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("approvals_company_status_idx").on(t.companyId, t.status)],
);

export const issueApprovals = sqliteTable(
  "issue_approvals",
  {
    issueId: text("issue_id")
      .notNull()
      .references(() => issues.id, { onDelete: "cascade" }),
    approvalId: text("approval_id")
      .notNull()
      .references(() => approvals.id, { onDelete: "cascade" }),
    companyId: text("company_id").notNull(),
    linkedByUserId: text("linked_by_user_id"),
    linkedByAgentId: text("linked_by_agent_id"),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.issueId, t.approvalId] }),
    index("issue_approvals_approval_idx").on(t.approvalId),
  ],
);

/** When a board user last read an issue; drives `isUnreadForMe` in the Mine inbox. */
export const issueReadStates = sqliteTable(
  "issue_read_states",
  {
    issueId: text("issue_id")
      .notNull()
      .references(() => issues.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull(),
    companyId: text("company_id").notNull(),
    lastReadAt: integer("last_read_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.issueId, t.userId] })],
);

/**
 * One row per wake of an agent (mention, heartbeat/invoke, …). The runner that executes them
 * arrives with the automation issue; until then runs stay `queued`.
 */
export const heartbeatRuns = sqliteTable(
  "heartbeat_runs",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    agentId: text("agent_id")
      .notNull()
      .references(() => agents.id, { onDelete: "cascade" }),
    status: text("status", { enum: RUN_STATUSES }).notNull(),
    /** on_demand | mention | assignment | approval | routine | timer */
    invocationSource: text("invocation_source").notNull(),
    /** issue_comment_mentioned, manual_invoke, … */
    wakeReason: text("wake_reason").notNull(),
    issueId: text("issue_id"),
    commentId: text("comment_id"),
    requestedByUserId: text("requested_by_user_id"),
    requestedByAgentId: text("requested_by_agent_id"),
    /** Why a wake was refused or a run failed (agent paused, over budget, …). */
    errorReason: text("error_reason"),
    createdAt: createdAt(),
    startedAt: integer("started_at"),
    finishedAt: integer("finished_at"),
  },
  (t) => [
    index("heartbeat_runs_agent_idx").on(t.agentId, t.status),
    index("heartbeat_runs_company_idx").on(t.companyId, t.createdAt),
  ],
);

export const activityLog = sqliteTable(
  "activity_log",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    actorType: text("actor_type", { enum: ACTOR_TYPES }).notNull(),
    actorId: text("actor_id").notNull(),
    /** `<entity>.<verb>`, e.g. `issue.checked_out`. */
    action: text("action").notNull(),
    entityType: text("entity_type").notNull(),
    entityId: text("entity_id").notNull(),
    details: text("details", { mode: "json" }).$type<JsonObject>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index("activity_log_company_idx").on(t.companyId, t.createdAt),
    index("activity_log_entity_idx").on(t.entityType, t.entityId),
  ],
);

export type CompanyRow = typeof companies.$inferSelect;
export type AgentRow = typeof agents.$inferSelect;
export type IssueRow = typeof issues.$inferSelect;
export type IssueCommentRow = typeof issueComments.$inferSelect;
export type IssueDocumentRow = typeof issueDocuments.$inferSelect;
export type ProjectRow = typeof projects.$inferSelect;
export type WorkspaceRow = typeof projectWorkspaces.$inferSelect;
export type GoalRow = typeof goals.$inferSelect;
export type ApprovalRow = typeof approvals.$inferSelect;
export type HeartbeatRunRow = typeof heartbeatRuns.$inferSelect;
export type ActivityRow = typeof activityLog.$inferSelect;
