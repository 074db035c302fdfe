import { createRoute, z } from "@hono/zod-openapi";
import { asc, eq } from "drizzle-orm";
import { refOf } from "../../../core/actor";
import { APPROVAL_STATUSES, APPROVAL_TYPES, approvals, issueApprovals } from "../../../db/schema";
import { controlAuth, controlErrors, createRouter, json, jsonBody } from "../../../http/openapi";
import { namedApprovals } from "../../approvals/records";
import { controlContext } from "../../shared";
import { findVisibleIssue } from "../store";
import { mutateIssue } from "./call";
import { IssueParamSchema, issueOpResponse } from "./checkout";

/** Approvals linked to an issue (the issue side of the link). Mounted at /api. */
export const issueApprovalRoutes = createRouter();
const tags = ["Issues"];

/** workers/control/approvals/records/resource.ts, for the OpenAPI document. */
const LinkedApprovalSchema = z.object({
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
  decidedAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const LinkBodySchema = z.object({ approvalId: z.uuid() }).strict();
const LinkParamSchema = IssueParamSchema.extend({ approvalId: z.string().min(1).max(100) });

issueApprovalRoutes.openapi(
  createRoute({
    method: "get",
    path: "/issues/{issueId}/approvals",
    tags,
    summary: "Approvals linked to the issue, oldest link first",
    security: controlAuth,
    request: { params: IssueParamSchema },
    responses: { 200: json(z.array(LinkedApprovalSchema), "Linked approvals"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const issue = await findVisibleIssue(db, actor, c.req.valid("param").issueId);
    const rows = await db
      .select({ approval: approvals })
      .from(issueApprovals)
      .innerJoin(approvals, eq(approvals.id, issueApprovals.approvalId))
      .where(eq(issueApprovals.issueId, issue.id))
      .orderBy(asc(issueApprovals.createdAt), asc(approvals.id));
    return c.json(
      await namedApprovals(
        db,
        rows.map((row) => row.approval),
      ),
      200,
    );
  },
);

issueApprovalRoutes.openapi(
  createRoute({
    method: "post",
    path: "/issues/{issueId}/approvals",
    tags,
    summary: "Link an approval of the same company to the issue",
    description: "201 when linked now; 200 when it already was (nothing changes).",
    security: controlAuth,
    request: { params: IssueParamSchema, ...jsonBody(LinkBodySchema) },
    responses: {
      200: json(LinkedApprovalSchema, "Already linked"),
      201: json(LinkedApprovalSchema, "Linked"),
      ...controlErrors,
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const issue = await findVisibleIssue(db, actor, c.req.valid("param").issueId);
    const { approvalId } = c.req.valid("json");
    return issueOpResponse(mutateIssue(c, issue, { kind: "linkApproval", actor: refOf(actor), approvalId }));
  },
);

issueApprovalRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/issues/{issueId}/approvals/{approvalId}",
    tags,
    summary: "Unlink an approval from the issue",
    security: controlAuth,
    request: { params: LinkParamSchema },
    responses: { 204: { description: "Unlinked" }, ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { issueId, approvalId } = c.req.valid("param");
    const issue = await findVisibleIssue(db, actor, issueId);
    await mutateIssue(c, issue, { kind: "unlinkApproval", actor: refOf(actor), approvalId });
    return c.body(null, 204);
  },
);
