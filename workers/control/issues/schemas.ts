import { z } from "@hono/zod-openapi";
import { ISSUE_PRIORITIES, ISSUE_STATUSES } from "../../db/schema";

/** Request and response shapes of the issue endpoints (routes/index.ts and the modules it composes). */

const Id = z.string().min(1).max(100);
const Timestamp = z.string().openapi({ format: "date-time" });
const NullableTimestamp = Timestamp.nullable();

export const MAX_TITLE = 500;
export const MAX_DESCRIPTION = 65_536;
export const MAX_COMMENT = 65_536;
export const MAX_LABELS = 50;
export const MAX_BLOCKERS = 50;

export const CompanyIssuesParamSchema = z.object({ companyId: Id });
export const IssueParamSchema = z.object({
  issueId: Id.openapi({ description: "Issue id, or its identifier (`ACM-12`, case-insensitive)" }),
});
export const CommentParamSchema = IssueParamSchema.extend({ commentId: Id });

const Title = z.string().trim().min(1).max(MAX_TITLE);
const Description = z.string().max(MAX_DESCRIPTION);
const CommentBody = z.string().min(1).max(MAX_COMMENT).regex(/\S/, "must not be blank");
/** A question or its answer: a comment's limits. */
export const QuestionText = CommentBody;
const LabelIds = z.array(Id).max(MAX_LABELS);
/** A calendar day; `2026-02-30` is refused, not rolled over to March. */
const DueDate = z.iso.date().openapi({ description: "A calendar day, YYYY-MM-DD", example: "2026-12-24" });
const BlockerIds = z.array(Id).max(MAX_BLOCKERS);

export const CreateIssueBodySchema = z
  .strictObject({
    title: Title,
    description: Description.nullable().optional(),
    status: z.enum(ISSUE_STATUSES).optional().openapi({
      description:
        "backlog or todo (others answer 422: in_progress is reached by checkout). Default: todo when an assignee is given, else backlog",
    }),
    priority: z.enum(ISSUE_PRIORITIES).optional().openapi({ description: "Default medium" }),
    parentId: Id.nullable()
      .optional()
      .openapi({ description: "The parent issue's id or identifier (ACM-12)" }),
    projectId: Id.nullable().optional(),
    goalId: Id.nullable().optional(),
    assigneeAgentId: Id.nullable().optional(),
    assigneeUserId: Id.nullable().optional().openapi({ description: "A board member of the company" }),
    dueDate: DueDate.nullable().optional(),
    labelIds: LabelIds.optional(),
    blockedByIssueIds: BlockerIds.optional().openapi({
      description:
        "Issues of the same company this issue waits for, by id or identifier (resolved when done or cancelled)",
    }),
  })
  .openapi("CreateIssueBody");

export type CreateIssueBody = z.infer<typeof CreateIssueBodySchema>;

export const UpdateIssueBodySchema = z
  .strictObject({
    title: Title.optional(),
    description: Description.nullable().optional(),
    status: z.enum(ISSUE_STATUSES).optional().openapi({
      description:
        "Moves follow the transition table; an invalid move answers 422 {details: {from, to, allowed}}",
    }),
    priority: z.enum(ISSUE_PRIORITIES).optional(),
    assigneeAgentId: Id.nullable().optional().openapi({ description: "Setting it clears assigneeUserId" }),
    assigneeUserId: Id.nullable().optional().openapi({ description: "Setting it clears assigneeAgentId" }),
    parentId: Id.nullable()
      .optional()
      .openapi({ description: "The parent issue's id or identifier (ACM-12)" }),
    projectId: Id.nullable().optional(),
    goalId: Id.nullable().optional(),
    dueDate: DueDate.nullable()
      .optional()
      .openapi({ description: "A calendar day, YYYY-MM-DD; null clears it" }),
    labelIds: LabelIds.optional().openapi({ description: "Replaces the issue's labels" }),
    blockedByIssueIds: BlockerIds.optional().openapi({
      description:
        "Replaces the issue's blockers: ids or identifiers of issues of the same company, not itself, no cycles (422). " +
        "Entering blocked needs an unresolved one, a comment, a pending linked approval or question",
    }),
    comment: CommentBody.optional().openapi({
      description: "Added as a comment in the same transaction as the update; @-mentions wake agents",
    }),
  })
  .openapi("UpdateIssueBody");

/** POST /issues/{issueId}/checkout; also the MCP tool checkout_issue (workers/mcp). */
export const CheckoutBodySchema = z
  .object({
    agentId: z.uuid(),
    expectedStatuses: z.array(z.enum(ISSUE_STATUSES)).min(1),
  })
  .strict();

export const CreateCommentBodySchema = z.strictObject({ body: CommentBody }).openapi("CreateCommentBody");

/** POST /issues/{issueId}/questions; also the MCP tool ask_question (workers/mcp). */
export const AskQuestionBodySchema = z.strictObject({ body: QuestionText }).openapi("AskQuestionBody");

/** 512 KiB of UTF-8 per document revision body. */
export const MAX_DOCUMENT_BYTES = 512 * 1024;
const utf8Length = (text: string): number => new TextEncoder().encode(text).length;

/** /issues/{issueId}/documents/{key}; also the MCP tool record_document and issue document resource. */
export const DocumentParamSchema = IssueParamSchema.extend({
  key: z
    .string()
    .min(1)
    .max(64)
    .regex(
      /^[a-z0-9][a-z0-9._-]*$/,
      "key: 1-64 characters of a-z, 0-9, '.', '_' or '-', starting alphanumeric",
    ),
});

/** PUT /issues/{issueId}/documents/{key}; also the MCP tool record_document. */
export const PutDocumentBodySchema = z
  .object({
    body: z
      .string()
      .refine((text) => utf8Length(text) <= MAX_DOCUMENT_BYTES, `body exceeds ${MAX_DOCUMENT_BYTES} bytes`),
    format: z.enum(["markdown", "text"]).optional(),
    title: z.string().max(500).nullable().optional(),
    changeSummary: z.string().max(2000).nullable().optional(),
    baseRevisionId: z.string().min(1).max(100).optional(),
  })
  .strict();

const StatusList = z.string().max(200).openapi({
  description: "Comma-separated statuses, e.g. `todo,in_progress,blocked`",
  example: "todo,in_progress",
});

export const ListIssuesQuerySchema = z.object({
  status: StatusList.optional(),
  assigneeAgentId: Id.optional(),
  assigneeUserId: Id.optional(),
  projectId: Id.optional(),
  labelId: Id.optional(),
  dueBefore: DueDate.optional().openapi({
    description: "Due on or before this day (issues without a due date never match)",
  }),
  dueAfter: DueDate.optional().openapi({ description: "Due on or after this day" }),
  parentId: Id.optional().openapi({ description: "Sub-issues of this issue (its id or identifier)" }),
  q: z.string().max(500).optional().openapi({
    description:
      "Full-text (prefix) search over title, identifier, description and comments; every term must match",
  }),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().min(1).max(200).optional().openapi({
    description: "The X-Next-Cursor header of the previous page (opaque); not with offset",
  }),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0).openapi({
    description:
      "Skips this many matches (kept for old clients; prefer cursor, which is stable under inserts)",
  }),
});

export const ListCommentsQuerySchema = z.object({
  after: Id.optional().openapi({ description: "A comment id: return only the comments after it" }),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export const InboxQuerySchema = z.object({
  userId: Id.optional().openapi({
    description: "The board user whose Mine tab this is (required for agents)",
  }),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export const IssueSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    identifier: z.string().openapi({ example: "ACM-12" }),
    issueNumber: z.number().int(),
    title: z.string(),
    description: z.string().nullable(),
    status: z.enum(ISSUE_STATUSES),
    priority: z.enum(ISSUE_PRIORITIES),
    parentId: z.string().nullable(),
    projectId: z.string().nullable(),
    goalId: z.string().nullable(),
    assigneeAgentId: z.string().nullable(),
    assigneeUserId: z.string().nullable(),
    dueDate: z
      .string()
      .nullable()
      .openapi({ description: "A calendar day, YYYY-MM-DD", example: "2026-12-24" }),
    createdByUserId: z.string().nullable(),
    createdByAgentId: z.string().nullable(),
    startedAt: NullableTimestamp,
    completedAt: NullableTimestamp,
    cancelledAt: NullableTimestamp,
    checkoutRunId: z.string().nullable().openapi({
      description: "The heartbeat run that checked it out with its run key (released if that run fails)",
    }),
    originRoutineId: z
      .string()
      .nullable()
      .openapi({ description: "Execution issues: the routine that created it" }),
    started_at: NullableTimestamp,
    completed_at: NullableTimestamp,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi("Issue");

/** An issue in the list: its labels too (a board shows them on each card). */
export const IssueListItemSchema = IssueSchema.extend({
  labelIds: z.array(z.string()),
}).openapi("IssueListItem");

export const IssueWithLabelsSchema = IssueSchema.extend({
  labelIds: z.array(z.string()),
  blockedByIssueIds: z
    .array(z.string())
    .openapi({ description: "Issues this one waits for, resolved (done, cancelled) or not" }),
}).openapi("IssueWithLabels");

export const CommentSchema = z
  .object({
    id: z.string(),
    issueId: z.string(),
    companyId: z.string(),
    body: z.string(),
    authorAgentId: z.string().nullable(),
    authorUserId: z.string().nullable(),
    authorName: z.string().nullable().openapi({
      description: "Display name of the author (the user's or agent's name); null when the account is gone",
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi("IssueComment");

export const UpdatedIssueSchema = IssueWithLabelsSchema.extend({
  comment: CommentSchema.optional().openapi({ description: "Present when the PATCH added a comment" }),
}).openapi("UpdatedIssue");

const ProjectSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  status: z.string(),
  goalId: z.string().nullable(),
});
const GoalSummarySchema = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  level: z.string(),
  status: z.string(),
});

export const AncestorSchema = z.object({
  id: z.string(),
  identifier: z.string(),
  title: z.string(),
  status: z.enum(ISSUE_STATUSES),
  priority: z.enum(ISSUE_PRIORITIES),
  assigneeAgentId: z.string().nullable(),
  projectId: z.string().nullable(),
  goalId: z.string().nullable(),
  description: z.string().nullable(),
  project: ProjectSummarySchema.nullable(),
  goal: GoalSummarySchema.nullable(),
});

export const IssueDetailSchema = IssueWithLabelsSchema.extend({
  project: ProjectSummarySchema.nullable(),
  goal: GoalSummarySchema.nullable(),
  ancestors: z
    .array(AncestorSchema)
    .openapi({ description: "Nearest parent first, up to the root (max 50)" }),
}).openapi("IssueDetail");

export const HeartbeatContextSchema = z
  .object({
    issue: z.object({
      id: z.string(),
      identifier: z.string(),
      title: z.string(),
      description: z.string().nullable(),
      status: z.enum(ISSUE_STATUSES),
      priority: z.enum(ISSUE_PRIORITIES),
      assigneeAgentId: z.string().nullable(),
      parentId: z.string().nullable(),
      projectId: z.string().nullable(),
      goalId: z.string().nullable(),
    }),
    ancestors: z.array(
      z.object({ id: z.string(), identifier: z.string(), title: z.string(), status: z.enum(ISSUE_STATUSES) }),
    ),
    project: z.object({ id: z.string(), name: z.string(), description: z.string().nullable() }).nullable(),
    goal: z.object({ id: z.string(), title: z.string(), description: z.string().nullable() }).nullable(),
    comments: z.object({
      total: z.number().int(),
      latest: z
        .array(
          z.object({
            id: z.string(),
            body: z.string(),
            authorAgentId: z.string().nullable(),
            authorUserId: z.string().nullable(),
            authorName: z.string().nullable(),
            createdAt: Timestamp,
          }),
        )
        .openapi({ description: "The last 20 comments, oldest first" }),
    }),
    commentCursor: z.string().nullable().openapi({ description: "Id of the latest comment (for ?after=)" }),
    budget: z
      .object({
        spentMonthlyCents: z.number().int(),
        budgetMonthlyCents: z.number().int(),
        utilizationPercent: z
          .number()
          .nullable()
          .openapi({ description: "null when the budget is unlimited (0)" }),
        guidance: z.enum(["normal", "prioritise"]),
      })
      .optional()
      .openapi({ description: "Only when the caller is an agent" }),
  })
  .openapi("IssueHeartbeatContext");

export const InboxEntrySchema = z
  .object({
    id: z.string(),
    identifier: z.string(),
    title: z.string(),
    status: z.enum(ISSUE_STATUSES),
    myLastTouchAt: NullableTimestamp.openapi({
      description: "Latest of: the user created it, commented, last read it; null when only assigned",
    }),
    lastExternalCommentAt: NullableTimestamp,
    assignedToMeAt: NullableTimestamp.openapi({
      description: "When someone else last assigned the issue to the user (null: never, or they took it)",
    }),
    isUnreadForMe: z.boolean().openapi({
      description: "Someone else commented, or assigned it to the user, since the user last touched it",
    }),
  })
  .openapi("MineInboxEntry");

export const MineUnreadCountSchema = z
  .object({ unreadCount: z.number().int().min(0) })
  .openapi("MineUnreadCount");

export const ReadStateSchema = z
  .object({ issueId: z.string(), userId: z.string(), lastReadAt: Timestamp })
  .openapi("IssueReadState");

export const AttachmentParamSchema = IssueParamSchema.extend({ attachmentId: Id });

export const AttachmentSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    issueId: z.string(),
    filename: z.string(),
    contentType: z.string(),
    byteSize: z.number().int(),
    createdByUserId: z.string().nullable(),
    createdByAgentId: z.string().nullable(),
    createdByName: z.string().nullable().openapi({ description: "Who attached it, by display name" }),
    createdAt: Timestamp,
    downloadPath: z
      .string()
      .openapi({ description: "GET it with the same credentials to download the file" }),
  })
  .openapi("IssueAttachment");
