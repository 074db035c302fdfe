import { createRoute, z } from "@hono/zod-openapi";
import { AGENT_STATUSES, type AgentRow } from "../../db/schema";
import { forbidden } from "../../http/errors";
import { controlAuth, controlErrors, createRouter, json } from "../../http/openapi";
import { companyForActor, controlContext } from "../shared";
import {
  AgentDetailSchema,
  AgentParamSchema,
  AgentSchema,
  CompanyParamSchema,
  OrgNodeSchema,
} from "./schemas";
import { type AgentsById, agentDetail, agentResource, agentWithCompany, companyAgents } from "./store";

/** Reading agents: oneself, one agent, the company's agents, and the org chart. */
export const agentOrgRoutes = createRouter();
const tags = ["Agents"];

// Registered before /agents/{agentId}, which would otherwise take "me" for an id.
agentOrgRoutes.openapi(
  createRoute({
    method: "get",
    path: "/agents/me",
    tags,
    summary: "The calling agent's own record with chainOfCommand (agent keys only)",
    security: controlAuth,
    responses: { 200: json(AgentDetailSchema, "The calling agent"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    if (actor.type !== "agent") throw forbidden("Only agents have /agents/me; use an agent key");
    const { agent, byId } = await agentWithCompany(db, actor, actor.agentId);
    return c.json(agentDetail(byId, agent), 200);
  },
);

agentOrgRoutes.openapi(
  createRoute({
    method: "get",
    path: "/agents/{agentId}",
    tags,
    summary: "Agent details with chainOfCommand (nearest manager first, up to the CEO)",
    security: controlAuth,
    request: { params: AgentParamSchema },
    responses: { 200: json(AgentDetailSchema, "The agent"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { agent, byId } = await agentWithCompany(db, actor, c.req.valid("param").agentId);
    return c.json(agentDetail(byId, agent), 200);
  },
);

const ListQuerySchema = z.object({
  status: z.enum(AGENT_STATUSES).optional().openapi({ description: "Only agents in this status" }),
});

agentOrgRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/agents",
    tags,
    summary: "List the company's agents (oldest first)",
    security: controlAuth,
    request: { params: CompanyParamSchema, query: ListQuerySchema },
    responses: { 200: json(z.array(AgentSchema), "Agents"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const { status } = c.req.valid("query");
    const rows = [...(await companyAgents(db, company.id)).values()];
    return c.json(rows.filter((row) => !status || row.status === status).map(agentResource), 200);
  },
);

interface OrgNode {
  id: string;
  name: string;
  role: AgentRow["role"];
  title: string | null;
  status: AgentRow["status"];
  /** OrgNode[]; typed loosely because the response typing cannot follow a recursive type. */
  reports: unknown[];
}

/**
 * The reporting tree. Roots are agents without a manager among the shown agents (so the reports of
 * a hidden terminated manager still appear, as roots); anything a corrupt loop kept unreachable
 * is shown as a root too rather than dropped.
 */
function orgTree(byId: AgentsById, includeTerminated: boolean): OrgNode[] {
  const shown = [...byId.values()].filter((row) => includeTerminated || row.status !== "terminated");
  const shownIds = new Set(shown.map((row) => row.id));
  const children = new Map<string, AgentRow[]>();
  for (const row of shown) {
    if (row.reportsTo === null || !shownIds.has(row.reportsTo)) continue;
    children.set(row.reportsTo, [...(children.get(row.reportsTo) ?? []), row]);
  }
  const placed = new Set<string>();
  const node = (row: AgentRow): OrgNode => {
    placed.add(row.id);
    const reports = (children.get(row.id) ?? []).filter((child) => !placed.has(child.id));
    return {
      id: row.id,
      name: row.name,
      role: row.role,
      title: row.title,
      status: row.status,
      reports: reports.map(node),
    };
  };
  const roots = shown.filter((row) => row.reportsTo === null || !shownIds.has(row.reportsTo)).map(node);
  for (const row of shown) if (!placed.has(row.id)) roots.push(node(row));
  return roots;
}

const OrgQuerySchema = z.object({
  includeTerminated: z
    .enum(["true", "false"])
    .optional()
    .openapi({ description: "true: include terminated agents (default false)" }),
});

agentOrgRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/org",
    tags,
    summary: "Org chart: a tree of reporting lines ({id, name, role, title, status, reports})",
    security: controlAuth,
    request: { params: CompanyParamSchema, query: OrgQuerySchema },
    responses: { 200: json(z.array(OrgNodeSchema), "Root agents with their reports"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const includeTerminated = c.req.valid("query").includeTerminated === "true";
    return c.json(orgTree(await companyAgents(db, company.id), includeTerminated), 200);
  },
);
