import { and, eq, inArray } from "drizzle-orm";
import type { Actor } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import {
  type AgentRow,
  type AgentStatus,
  type ApprovalRow,
  agents,
  issues,
  type JsonObject,
} from "../../db/schema";
import { conflict, unprocessable } from "../../http/errors";
import { issueIdsIn, redactSecrets } from "../shared";
import { withRuntimeDefaults } from "./config-store";
import type { AgentCreateInput } from "./schemas";
import { ensureSecretBindingsAllowed } from "./secret-bindings";
import { canonicalKeys } from "./skill-store";
import {
  type AgentsById,
  ensureSingleCeo,
  ensureWithinTeam,
  nameTaken,
  requireOwnerToSteerCeo,
  validateManager,
} from "./store";

/** Turning an agent create body (direct create or hire request) into the rows to insert. */

/**
 * An agent that creates or hires without naming a manager gets itself as the manager: hires grow
 * the caller's team. Board users (and an explicit null) leave the agent without one.
 */
function managerFor(actor: Actor, input: AgentCreateInput): string | null {
  if (input.reportsTo !== undefined) return input.reportsTo;
  return actor.type === "agent" ? actor.agentId : null;
}

/**
 * sourceIssueId joins sourceIssueIds (ids or identifiers), first; every one must be an issue of this
 * company. Answers their ids.
 */
async function sourceIssues(db: Db, companyId: string, input: AgentCreateInput): Promise<string[]> {
  const keys = [...(input.sourceIssueId ? [input.sourceIssueId] : []), ...(input.sourceIssueIds ?? [])];
  const ids = [...new Set(await issueIdsIn(db, companyId, keys))];
  if (ids.length === 0) return [];
  const found = await db
    .select({ id: issues.id })
    .from(issues)
    .where(and(eq(issues.companyId, companyId), inArray(issues.id, ids)));
  const known = new Set(found.map((row) => row.id));
  const missing = ids.filter((id) => !known.has(id));
  if (missing.length > 0) throw unprocessable(`unknown source issues: ${missing.join(", ")}`, { missing });
  return ids;
}

/**
 * The row for a new agent after every rule the body can break: a unique name (409), one CEO per
 * company, a live manager in the same company, known skills and source issues (422), and, for agent
 * callers other than the CEO, a manager inside the caller's own team (403).
 */
export async function buildAgentRow(
  db: Db,
  actor: Actor,
  companyId: string,
  byId: AgentsById,
  input: AgentCreateInput,
  status: AgentStatus,
  now: number,
): Promise<AgentRow> {
  const reportsTo = managerFor(actor, input);
  ensureWithinTeam(actor, byId, reportsTo);
  if (nameTaken(byId, input.name, null)) throw conflict(`An agent named "${input.name}" already exists`);
  ensureSingleCeo(byId, input.role, null);
  if (input.role === "ceo") await requireOwnerToSteerCeo(db, actor, companyId, "make an agent the CEO");
  if (reportsTo !== null) validateManager(byId, reportsTo, null);
  const sourceIssueIds = await sourceIssues(db, companyId, input);
  await ensureSecretBindingsAllowed(db, actor, companyId, null, input.adapterConfig ?? {});
  return {
    id: newId(),
    companyId,
    name: input.name,
    nameKey: input.name.toLowerCase(),
    role: input.role,
    title: input.title ?? null,
    icon: input.icon ?? null,
    status,
    pauseReason: null,
    reportsTo,
    capabilities: input.capabilities ?? null,
    adapterType: input.adapterType,
    adapterConfig: input.adapterConfig ?? {},
    runtimeConfig: withRuntimeDefaults(input.runtimeConfig),
    desiredSkills: await canonicalKeys(db, companyId, input.desiredSkills ?? []),
    budgetMonthlyCents: input.budgetMonthlyCents ?? 0,
    spentMonthlyCents: 0,
    sourceIssueId: sourceIssueIds[0] ?? null,
    sourceIssueIds,
    lastHeartbeatAt: null,
    terminatedAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

export const agentInsert = (db: Db, row: AgentRow) => db.insert(agents).values(row);

/**
 * The hire_agent approval for a pending agent. Its payload is what was asked for (normalised) plus
 * the agent's id; secrets in the requested config are redacted, since approvals are read widely.
 */
export function hireApprovalRow(actor: Actor, agent: AgentRow, now: number): ApprovalRow {
  const payload: JsonObject = {
    agentId: agent.id,
    name: agent.name,
    role: agent.role,
    title: agent.title,
    icon: agent.icon,
    reportsTo: agent.reportsTo,
    capabilities: agent.capabilities,
    desiredSkills: agent.desiredSkills,
    adapterType: agent.adapterType,
    adapterConfig: agent.adapterConfig,
    runtimeConfig: agent.runtimeConfig,
    budgetMonthlyCents: agent.budgetMonthlyCents,
    sourceIssueId: agent.sourceIssueId,
    sourceIssueIds: agent.sourceIssueIds,
  };
  return {
    id: newId(),
    companyId: agent.companyId,
    type: "hire_agent",
    status: "pending",
    payload: redactSecrets(payload),
    requestedByAgentId: actor.type === "agent" ? actor.agentId : null,
    requestedByUserId: actor.type === "board" ? actor.userId : null,
    decisionNote: null,
    decidedByUserId: null,
    decidedAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** Managers may request hires: the CEO, or an agent with at least one live direct report. */
export function isManager(byId: AgentsById, agentId: string): boolean {
  return [...byId.values()].some((row) => row.reportsTo === agentId && row.status !== "terminated");
}
