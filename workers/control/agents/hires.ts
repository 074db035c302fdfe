import { createRoute } from "@hono/zod-openapi";
import type { BatchItem } from "drizzle-orm/batch";
import { refOf } from "../../core/actor";
import { approvals, issueApprovals } from "../../db/schema";
import { forbidden } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { namedApproval } from "../approvals/records";
import { announceFrom, queueApprovalNotices } from "../line";
import { activityInsert, companyForActor, controlContext } from "../shared";
import { agentInsert, buildAgentRow, hireApprovalRow, isManager } from "./create";
import { AgentCreateSchema, AgentSchema, CompanyParamSchema, HireResultSchema } from "./schemas";
import { agentResource, commit, companyAgents, isCeo, writeAgent } from "./store";

/** Creating agents: directly (board or CEO) or as a hire request that may need board approval. */
export const agentHireRoutes = createRouter();
const tags = ["Agents"];

const errors = {
  ...controlErrors,
  409: controlError("An agent with this name (ignoring case) already exists"),
  422: controlError("One CEO per company; reportsTo, desiredSkills or source issues not valid here"),
} as const;

agentHireRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/agents",
    tags,
    summary: "Create an agent directly, without approval (board users and the CEO agent)",
    description:
      "The agent starts idle. An agent caller that names no manager becomes the new agent's manager. " +
      "desiredSkills accept skill ids, canonical keys or a unique slug and are stored as canonical keys.",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(AgentCreateSchema) },
    responses: { 201: json(AgentSchema, "The new agent"), ...errors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const byId = await companyAgents(db, company.id);
    if (actor.type === "agent" && !isCeo(actor, byId))
      throw forbidden("Only board users and the CEO may create agents directly; request a hire instead");
    const now = Date.now();
    const row = await buildAgentRow(db, actor, company.id, byId, c.req.valid("json"), "idle", now);
    await writeAgent(
      commit(db, [
        agentInsert(db, row),
        activityInsert(
          db,
          {
            companyId: company.id,
            actor: refOf(actor),
            action: "agent.created",
            entityType: "agent",
            entityId: row.id,
            details: { name: row.name, role: row.role, reportsTo: row.reportsTo, via: "direct" },
          },
          now,
        ),
      ]),
    );
    return c.json(agentResource(row), 201);
  },
);

agentHireRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/agent-hires",
    tags,
    summary: "Request a hire (board users, the CEO, and managers; ICs ask their manager)",
    description:
      "When the company requires board approval for new agents, the agent is created pending_approval " +
      "with a pending hire_agent approval (payload: the requested fields and agentId; secrets redacted) " +
      "linked to the source issues; otherwise it starts idle and approval is null.",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(AgentCreateSchema) },
    responses: { 201: json(HireResultSchema, "The agent and its approval (or null)"), ...errors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const byId = await companyAgents(db, company.id);
    if (actor.type === "agent" && !isCeo(actor, byId) && !isManager(byId, actor.agentId))
      throw forbidden("Only board users, the CEO and managers may request hires; ask your manager");
    const now = Date.now();
    const needsApproval = company.requireBoardApprovalForNewAgents;
    const status = needsApproval ? "pending_approval" : "idle";
    const row = await buildAgentRow(db, actor, company.id, byId, c.req.valid("json"), status, now);
    const approval = needsApproval ? hireApprovalRow(actor, row, now) : null;
    const ref = refOf(actor);
    const statements: BatchItem<"sqlite">[] = [agentInsert(db, row)];
    if (approval) {
      statements.push(db.insert(approvals).values(approval));
      if (row.sourceIssueIds.length > 0)
        statements.push(
          db.insert(issueApprovals).values(
            row.sourceIssueIds.map((issueId) => ({
              issueId,
              approvalId: approval.id,
              companyId: company.id,
              linkedByUserId: ref.type === "board" ? ref.userId : null,
              linkedByAgentId: ref.type === "agent" ? ref.agentId : null,
              createdAt: now,
            })),
          ),
        );
      statements.push(
        activityInsert(
          db,
          {
            companyId: company.id,
            actor: ref,
            action: "approval.created",
            entityType: "approval",
            entityId: approval.id,
            details: { type: approval.type, agentId: row.id },
          },
          now,
        ),
      );
    }
    statements.push(
      activityInsert(
        db,
        {
          companyId: company.id,
          actor: ref,
          action: approval ? "agent.hire_requested" : "agent.created",
          entityType: "agent",
          entityId: row.id,
          details: {
            name: row.name,
            role: row.role,
            reportsTo: row.reportsTo,
            via: "hire",
            approvalId: approval?.id ?? null,
          },
        },
        now,
      ),
    );
    await writeAgent(commit(db, statements));
    if (approval)
      await announceFrom(c, company.id, (tx, origin, at) => queueApprovalNotices(tx, approval, origin, at));
    return c.json(
      { agent: agentResource(row), approval: approval ? await namedApproval(db, approval) : null },
      201,
    );
  },
);
