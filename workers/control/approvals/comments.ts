import { createRoute, z } from "@hono/zod-openapi";
import { asc, eq } from "drizzle-orm";
import { authorColumns, refOf } from "../../core/actor";
import { newId } from "../../db/client";
import { type ApprovalCommentRow, approvalComments } from "../../db/schema";
import { controlAuth, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { commitBatch } from "../issues";
import { type ActorNames, activityInsert, actorNames, controlContext, nameOf } from "../shared";
import { findApproval } from "./records";
import { ApprovalCommentSchema, ApprovalParamSchema, CreateApprovalCommentBodySchema } from "./schemas";

/** The discussion under an approval: board users and the company's agents. Mounted via routes.ts. */
export const approvalCommentRoutes = createRouter();
const tags = ["Approvals"];

const ListQuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(500).default(100) });

export const approvalCommentResource = (row: ApprovalCommentRow, names: ActorNames) => ({
  id: row.id,
  approvalId: row.approvalId,
  companyId: row.companyId,
  body: row.body,
  authorAgentId: row.authorAgentId,
  authorUserId: row.authorUserId,
  authorName: nameOf(names, row.authorUserId, row.authorAgentId),
  createdAt: new Date(row.createdAt).toISOString(),
  updatedAt: new Date(row.updatedAt).toISOString(),
});

approvalCommentRoutes.openapi(
  createRoute({
    method: "get",
    path: "/approvals/{approvalId}/comments",
    tags,
    summary: "Comments on the approval, oldest first",
    security: controlAuth,
    request: { params: ApprovalParamSchema, query: ListQuerySchema },
    responses: { 200: json(z.array(ApprovalCommentSchema), "The comments"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const approval = await findApproval(db, actor, c.req.valid("param").approvalId);
    const rows = await db
      .select()
      .from(approvalComments)
      .where(eq(approvalComments.approvalId, approval.id))
      .orderBy(asc(approvalComments.createdAt), asc(approvalComments.id))
      .limit(c.req.valid("query").limit);
    const names = await actorNames(db, approval.companyId, {
      userIds: rows.map((row) => row.authorUserId),
      agentIds: rows.map((row) => row.authorAgentId),
    });
    return c.json(
      rows.map((row) => approvalCommentResource(row, names)),
      200,
    );
  },
);

approvalCommentRoutes.openapi(
  createRoute({
    method: "post",
    path: "/approvals/{approvalId}/comments",
    tags,
    summary: "Comment on the approval (board users and the company's agents), in any status",
    security: controlAuth,
    request: { params: ApprovalParamSchema, ...jsonBody(CreateApprovalCommentBodySchema) },
    responses: { 201: json(ApprovalCommentSchema, "The comment"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const approval = await findApproval(db, actor, c.req.valid("param").approvalId);
    const now = Date.now();
    const author = authorColumns(refOf(actor));
    const row: ApprovalCommentRow = {
      id: newId(),
      companyId: approval.companyId,
      approvalId: approval.id,
      authorAgentId: author.agentId,
      authorUserId: author.userId,
      body: c.req.valid("json").body,
      createdAt: now,
      updatedAt: now,
    };
    await commitBatch(db, [
      db.insert(approvalComments).values(row),
      activityInsert(
        db,
        {
          companyId: approval.companyId,
          actor: refOf(actor),
          action: "approval.comment_added",
          entityType: "approval",
          entityId: approval.id,
          details: { commentId: row.id },
        },
        now,
      ),
    ]);
    const names = await actorNames(db, approval.companyId, {
      userIds: [row.authorUserId],
      agentIds: [row.authorAgentId],
    });
    return c.json(approvalCommentResource(row, names), 201);
  },
);
