import { z } from "@hono/zod-openapi";
import { APPROVAL_STATUSES, APPROVAL_TYPES } from "../../db/schema";

/** Request and response shapes of the approvals API (routes.ts and the modules it composes). */

const Id = z.string().min(1).max(100);
const Timestamp = z.string().openapi({ format: "date-time" });

/** Payloads are free-form for the board to read; the cap keeps one approval from bloating the list. */
export const MAX_PAYLOAD_BYTES = 65_536;
export const MAX_NOTE = 10_000;
export const MAX_COMMENT = 65_536;
export const MAX_LINKED_ISSUES = 50;

const Payload = z
  .record(z.string(), z.unknown())
  .refine((value) => new TextEncoder().encode(JSON.stringify(value)).length <= MAX_PAYLOAD_BYTES, {
    message: `payload must be at most ${MAX_PAYLOAD_BYTES} bytes of JSON`,
  })
  .openapi({ description: "Free-form JSON object; hire_agent payloads carry the agentId" });

export const CompanyParamSchema = z.object({ companyId: Id });
export const ApprovalParamSchema = z.object({ approvalId: Id });

export const ApprovalSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    type: z.enum(APPROVAL_TYPES),
    status: z.enum(APPROVAL_STATUSES),
    payload: z.record(z.string(), z.unknown()),
    requestedByAgentId: z.string().nullable(),
    requestedByUserId: z.string().nullable(),
    requestedByName: z
      .string()
      .nullable()
      .openapi({ description: "Display name of the requesting agent or user" }),
    decisionNote: z.string().nullable(),
    decidedByUserId: z.string().nullable(),
    decidedByName: z.string().nullable().openapi({ description: "Display name of the deciding board user" }),
    decidedAt: Timestamp.nullable(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi("Approval");

export const CreateApprovalBodySchema = z
  .strictObject({
    type: z.enum(APPROVAL_TYPES),
    requestedByAgentId: z.uuid().nullable().optional().openapi({
      description: "Agents may only name themselves (default: the calling agent)",
    }),
    payload: Payload,
    issueIds: z.array(z.string().min(1).max(100)).max(MAX_LINKED_ISSUES).optional().openapi({
      description: "Issues of the same company to link the approval to (ids or identifiers such as ACM-12)",
    }),
  })
  .openapi("CreateApprovalBody");

export const ListApprovalsQuerySchema = z.object({
  status: z.string().max(200).optional().openapi({
    description: "Comma-separated statuses, e.g. `pending,revision_requested`",
  }),
});

export const DecisionBodySchema = z
  .strictObject({ decisionNote: z.string().max(MAX_NOTE).nullable().optional() })
  .openapi("ApprovalDecisionBody");

export const ResubmitBodySchema = z
  .strictObject({ payload: Payload.optional().openapi({ description: "Replaces the payload when given" }) })
  .openapi("ApprovalResubmitBody");

export const ApprovalCommentSchema = z
  .object({
    id: z.string(),
    approvalId: z.string(),
    companyId: z.string(),
    body: z.string(),
    authorAgentId: z.string().nullable(),
    authorUserId: z.string().nullable(),
    authorName: z.string().nullable().openapi({ description: "Display name of the author" }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi("ApprovalComment");

export const CreateApprovalCommentBodySchema = z
  .strictObject({ body: z.string().min(1).max(MAX_COMMENT).regex(/\S/, "must not be blank") })
  .openapi("CreateApprovalCommentBody");
