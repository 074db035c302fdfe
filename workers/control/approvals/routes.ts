import { createRoute, z } from "@hono/zod-openapi";
import { type Actor, authorColumns, refOf } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { type ApprovalRow, approvals, issueApprovals } from "../../db/schema";
import { forbidden, unprocessable } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { commitBatch, IssueSchema, issueResource, type Statement } from "../issues";
import { announceFrom, queueApprovalNotices } from "../line";
import { activityInsert, companyForActor, controlContext } from "../shared";
import { approvalCommentRoutes } from "./comments";
import { approvalDecisionRoutes } from "./decisions";
import {
  assertHirePayload,
  companyAgent,
  companyIssueIds,
  findApproval,
  linkedIssues,
  listApprovals,
  namedApproval,
  namedApprovals,
  parseApprovalStatuses,
} from "./records";
import {
  ApprovalParamSchema,
  ApprovalSchema,
  CompanyParamSchema,
  CreateApprovalBodySchema,
  ListApprovalsQuerySchema,
} from "./schemas";

/**
 * Approvals: requests from agents (or board users) that wait for a board decision. This module has
 * create, list, get and the linked issues; decisions and comments live in their own modules and are
 * mounted here. Mounted at /api.
 */
export const approvalRoutes = createRouter();
const tags = ["Approvals"];

type CreateBody = z.infer<typeof CreateApprovalBodySchema>;

/**
 * Who the approval is requested by. Agents request only as themselves; a board user files it in
 * their own name and may name the agent it is for (which that agent may then resubmit, and which
 * is woken on the decision).
 */
async function requesterOf(db: Db, actor: Actor, companyId: string, body: CreateBody) {
  if (actor.type === "agent") {
    if (body.requestedByAgentId && body.requestedByAgentId !== actor.agentId)
      throw forbidden("Agents may only request approvals as themselves");
    return { requestedByAgentId: actor.agentId, requestedByUserId: null };
  }
  const agentId = body.requestedByAgentId ?? null;
  if (agentId !== null && !(await companyAgent(db, companyId, agentId)))
    throw unprocessable("requestedByAgentId must be an agent of this company", {
      requestedByAgentId: agentId,
    });
  return { requestedByAgentId: agentId, requestedByUserId: actor.userId };
}

function linkRows(row: ApprovalRow, actor: Actor, issueIds: string[]) {
  const author = authorColumns(refOf(actor));
  return issueIds.map((issueId) => ({
    issueId,
    approvalId: row.id,
    companyId: row.companyId,
    linkedByUserId: author.userId,
    linkedByAgentId: author.agentId,
    createdAt: row.createdAt,
  }));
}

approvalRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/approvals",
    tags,
    summary: "Request an approval (agents as themselves; board users too)",
    description:
      "Creates a pending approval, linked to issueIds when given. hire_agent payloads must carry the " +
      "agentId of a pending_approval agent of the company (agent-hires creates those itself).",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(CreateApprovalBodySchema) },
    responses: {
      201: json(ApprovalSchema, "The pending approval"),
      ...controlErrors,
      422: controlError(
        "requestedByAgentId, issueIds or a hire payload not valid in this company, or a whatsapp_send (filed only by MCP)",
      ),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const body = c.req.valid("json");
    // A held WhatsApp send is sent on the company's line when approved: only the MCP send tools file
    // one, with the arguments their schema checked (docs/mcp.md "WhatsApp send tools and governance").
    if (body.type === "whatsapp_send")
      throw unprocessable("whatsapp_send approvals are filed by the MCP send tools, not created directly");
    const requester = await requesterOf(db, actor, company.id, body);
    if (body.type === "hire_agent") await assertHirePayload(db, company.id, body.payload);
    const issueIds = await companyIssueIds(db, company.id, body.issueIds ?? []);
    const now = Date.now();
    const row: ApprovalRow = {
      id: newId(),
      companyId: company.id,
      type: body.type,
      status: "pending",
      payload: body.payload,
      ...requester,
      decisionNote: null,
      decidedByUserId: null,
      decidedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    const statements: Statement[] = [db.insert(approvals).values(row)];
    if (issueIds.length > 0)
      statements.push(db.insert(issueApprovals).values(linkRows(row, actor, issueIds)));
    statements.push(
      activityInsert(
        db,
        {
          companyId: company.id,
          actor: refOf(actor),
          action: "approval.created",
          entityType: "approval",
          entityId: row.id,
          details: { type: row.type, requestedByAgentId: row.requestedByAgentId, issueIds },
        },
        now,
      ),
    );
    await commitBatch(db, statements);
    await announceFrom(c, company.id, (tx, origin, at) => queueApprovalNotices(tx, row, origin, at));
    return c.json(await namedApproval(db, row), 201);
  },
);

approvalRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/approvals",
    tags,
    summary: "List the company's approvals, newest first",
    description: "status filters by one or more statuses (comma-separated); an unknown status is a 400.",
    security: controlAuth,
    request: { params: CompanyParamSchema, query: ListApprovalsQuerySchema },
    responses: { 200: json(z.array(ApprovalSchema), "The approvals"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const statuses = parseApprovalStatuses(c.req.valid("query").status);
    const rows = await listApprovals(db, company.id, statuses);
    return c.json(await namedApprovals(db, rows), 200);
  },
);

approvalRoutes.openapi(
  createRoute({
    method: "get",
    path: "/approvals/{approvalId}",
    tags,
    summary: "One approval",
    security: controlAuth,
    request: { params: ApprovalParamSchema },
    responses: { 200: json(ApprovalSchema, "The approval"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const approval = await findApproval(db, actor, c.req.valid("param").approvalId);
    return c.json(await namedApproval(db, approval), 200);
  },
);

approvalRoutes.openapi(
  createRoute({
    method: "get",
    path: "/approvals/{approvalId}/issues",
    tags,
    summary: "Issues linked to the approval, oldest link first",
    security: controlAuth,
    request: { params: ApprovalParamSchema },
    responses: { 200: json(z.array(IssueSchema), "The linked issues"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const approval = await findApproval(db, actor, c.req.valid("param").approvalId);
    const rows = await linkedIssues(db, approval.id);
    return c.json(rows.map(issueResource), 200);
  },
);

approvalRoutes.route("/", approvalDecisionRoutes);
approvalRoutes.route("/", approvalCommentRoutes);
