import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import {
  ACTOR_TYPES,
  APPROVAL_STATUSES,
  APPROVAL_TYPES,
  agents,
  companies,
  ISSUE_PRIORITIES,
  ISSUE_STATUSES,
  type JsonObject,
  labels,
  RUN_STATUSES,
} from "./control-schema";

/**
 * Issues and what hangs off them (labels, comments, documents, approval links, read states), plus
 * approvals, heartbeat runs and the activity log. Same conventions as control-schema.ts.
 */

const createdAt = () => integer("created_at").notNull();
const updatedAt = () => integer("updated_at").notNull();

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
    /** A calendar day (`YYYY-MM-DD`, no time zone): compared as text, which sorts as dates do. */
    dueDate: text("due_date"),
    createdByUserId: text("created_by_user_id"),
    createdByAgentId: text("created_by_agent_id"),
    startedAt: integer("started_at"),
    completedAt: integer("completed_at"),
    cancelledAt: integer("cancelled_at"),
    /** The heartbeat run whose run-scoped key checked the issue out; a dead run's lock is released. */
    checkoutRunId: text("checkout_run_id"),
    /** Execution issues of routines: the routine that created it (null for ordinary issues). */
    originRoutineId: text("origin_routine_id"),
    /**
     * Created under a routine policy that allows one open execution issue at a time (coalesce_if_active,
     * skip_if_active): the partial unique index below then refuses a second one, even from two runs that
     * raced past the "is one open?" read.
     */
    originExclusive: integer("origin_exclusive", { mode: "boolean" }).notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("issues_checkout_run_idx").on(t.checkoutRunId),
    index("issues_origin_routine_idx").on(t.originRoutineId, t.status),
    uniqueIndex("issues_open_routine_execution_uq")
      .on(t.originRoutineId)
      .where(sql`origin_exclusive = 1 AND status NOT IN ('done', 'cancelled')`),
    // The list's order (priority, age, number) after each filter it serves without sorting: the
    // first page of 100,000 issues reads 100 index entries (issue 31, test/workers/control/issues/list-plans.test.ts).
    index("issues_company_priority_idx").on(t.companyId, t.priorityRank, t.createdAt, t.issueNumber),
    index("issues_company_status_idx").on(t.companyId, t.status, t.priorityRank, t.createdAt, t.issueNumber),
    index("issues_assignee_agent_idx").on(t.assigneeAgentId, t.status),
    index("issues_assignee_user_idx").on(t.assigneeUserId),
    index("issues_parent_idx").on(t.parentId),
    index("issues_project_idx").on(t.projectId, t.priorityRank, t.createdAt, t.issueNumber),
    index("issues_company_due_idx").on(t.companyId, t.dueDate),
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

/**
 * "Issue X is blocked by issue Y" (blockedByIssueIds). Both in one company; deleting either issue
 * drops the link. The reverse index answers "whose last blocker did this issue just resolve?".
 */
export const issueBlockers = sqliteTable(
  "issue_blockers",
  {
    issueId: text("issue_id")
      .notNull()
      .references(() => issues.id, { onDelete: "cascade" }),
    blockerIssueId: text("blocker_issue_id")
      .notNull()
      .references(() => issues.id, { onDelete: "cascade" }),
    companyId: text("company_id").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.issueId, t.blockerIssueId] }),
    index("issue_blockers_blocker_idx").on(t.blockerIssueId),
  ],
);

/** Files attached to an issue: the bytes in R2 (ASSETS, under `r2_key`), the metadata here. */
export const issueAttachments = sqliteTable(
  "issue_attachments",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    issueId: text("issue_id")
      .notNull()
      .references(() => issues.id, { onDelete: "cascade" }),
    filename: text("filename").notNull(),
    contentType: text("content_type").notNull(),
    byteSize: integer("byte_size").notNull(),
    r2Key: text("r2_key").notNull(),
    createdByUserId: text("created_by_user_id"),
    createdByAgentId: text("created_by_agent_id"),
    createdAt: createdAt(),
  },
  (t) => [index("issue_attachments_issue_idx").on(t.issueId, t.createdAt)],
);

/**
 * A question asked on an issue (usually by its agent, of the board) that waits for an answer. A
 * pending question is one of the reasons an issue may sit in `blocked`; answering wakes the asker.
 */
export const issueQuestions = sqliteTable(
  "issue_questions",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    issueId: text("issue_id")
      .notNull()
      .references(() => issues.id, { onDelete: "cascade" }),
    body: text("body").notNull(),
    askedByAgentId: text("asked_by_agent_id"),
    askedByUserId: text("asked_by_user_id"),
    answer: text("answer"),
    answeredByAgentId: text("answered_by_agent_id"),
    answeredByUserId: text("answered_by_user_id"),
    answeredAt: integer("answered_at"),
    /** How the answer came: "whatsapp" when a member answered on the company's line; null otherwise. */
    answeredVia: text("answered_via", { enum: ["whatsapp"] }),
    createdAt: createdAt(),
  },
  (t) => [index("issue_questions_issue_idx").on(t.issueId, t.createdAt)],
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

export const approvalComments = sqliteTable(
  "approval_comments",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    approvalId: text("approval_id")
      .notNull()
      .references(() => approvals.id, { onDelete: "cascade" }),
    authorAgentId: text("author_agent_id"),
    authorUserId: text("author_user_id"),
    body: text("body").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("approval_comments_approval_idx").on(t.approvalId, t.createdAt)],
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
    /** on_demand | mention | comment | assignment | approval | routine | timer */
    invocationSource: text("invocation_source").notNull(),
    /** issue_comment_mentioned, manual_invoke, … */
    wakeReason: text("wake_reason").notNull(),
    issueId: text("issue_id"),
    commentId: text("comment_id"),
    requestedByUserId: text("requested_by_user_id"),
    requestedByAgentId: text("requested_by_agent_id"),
    /** Why a wake was refused or a run failed (agent paused, over budget, …). */
    errorReason: text("error_reason"),
    /** Approval decisions: the approval and its status, handed to the run as PLATFORM_APPROVAL_*. */
    approvalId: text("approval_id"),
    approvalStatus: text("approval_status"),
    /** Routine runs: the routine run that caused this wake. */
    routineRunId: text("routine_run_id"),
    /** Further wakes for the same agent and issue merged into this queued run. */
    coalescedCount: integer("coalesced_count").notNull().default(0),
    /** The registered runner executing it (runners.id), and its last sign of life. */
    runnerId: text("runner_id"),
    /**
     * The runner's link (one per connection) that holds it: a runner that reconnects never adopts the
     * runs of its previous link, which were failed when that link closed.
     */
    runnerLinkId: text("runner_link_id"),
    heartbeatAt: integer("heartbeat_at"),
    /** Someone asked to cancel the running run; it ends `cancelled` when its process is gone. */
    cancelRequestedAt: integer("cancel_requested_at"),
    exitCode: integer("exit_code"),
    /** The last 16 KiB of the run's output; the whole log is in heartbeat_run_log_chunks. */
    logExcerpt: text("log_excerpt"),
    usage: text("usage", { mode: "json" }).$type<JsonObject>(),
    costCents: integer("cost_cents").notNull().default(0),
    /** The CLI session the run ended in (its runner's report); null: none reported. */
    sessionId: text("session_id"),
    /** The run resumed the session an earlier run of its agent and issue left, not a fresh one. */
    sessionResumed: integer("session_resumed", { mode: "boolean" }).notNull().default(false),
    createdAt: createdAt(),
    startedAt: integer("started_at"),
    finishedAt: integer("finished_at"),
  },
  (t) => [
    index("heartbeat_runs_agent_idx").on(t.agentId, t.status),
    index("heartbeat_runs_company_idx").on(t.companyId, t.createdAt, t.id),
    index("heartbeat_runs_issue_idx").on(t.issueId, t.createdAt),
    index("heartbeat_runs_status_idx").on(t.status, t.createdAt),
    // A company's runs in one state, in queue order: the claim's count of its running runs (the
    // company cap) and a queued run's place in its company's queue.
    index("heartbeat_runs_company_status_idx").on(t.companyId, t.status, t.createdAt),
    // At most one queued run per agent and issue: a duplicate wake coalesces into it (see ../control/wakes/wake.ts).
    // Wakes without an issue (timer, manual) have NULL here, which never conflicts; ../control/wakes/wake.ts handles them.
    uniqueIndex("heartbeat_runs_one_queued_uq").on(t.agentId, t.issueId).where(sql`status = 'queued'`),
  ],
);

export const activityLog = sqliteTable(
  "activity_log",
  {
    /** Its place in the log, in commit order and never reused (AUTOINCREMENT): events' cursor. */
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    id: text("id").notNull().unique(),
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
    index("activity_log_company_idx").on(t.companyId, t.createdAt, t.id),
    index("activity_log_entity_idx").on(t.entityType, t.entityId),
    /** The company's events from a cursor, in log order. */
    index("activity_log_company_seq_idx").on(t.companyId, t.seq),
  ],
);

export type IssueRow = typeof issues.$inferSelect;
export type IssueCommentRow = typeof issueComments.$inferSelect;
export type IssueQuestionRow = typeof issueQuestions.$inferSelect;
export type IssueAttachmentRow = typeof issueAttachments.$inferSelect;
export type IssueDocumentRow = typeof issueDocuments.$inferSelect;
export type ApprovalRow = typeof approvals.$inferSelect;
export type ApprovalCommentRow = typeof approvalComments.$inferSelect;
export type HeartbeatRunRow = typeof heartbeatRuns.$inferSelect;
export type ActivityRow = typeof activityLog.$inferSelect;
