import { asc, eq } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Actor, AgentActor } from "../../core/actor";
import type { Db } from "../../db/client";
import { type AgentRow, agents } from "../../db/schema";
import { conflict, forbidden, unprocessable } from "../../http/errors";
import { ensureVisible, redactSecrets, requireOwner } from "../shared";

/** Loading agents, their reporting lines, who may act on them, and the JSON they render as. */

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** An agent as every endpoint returns it. Obvious secrets in its configs are redacted. */
export const agentResource = (row: AgentRow) => ({
  id: row.id,
  companyId: row.companyId,
  name: row.name,
  role: row.role,
  title: row.title,
  icon: row.icon,
  status: row.status,
  pauseReason: row.pauseReason,
  reportsTo: row.reportsTo,
  capabilities: row.capabilities,
  adapterType: row.adapterType,
  adapterConfig: redactSecrets(row.adapterConfig),
  runtimeConfig: redactSecrets(row.runtimeConfig),
  desiredSkills: row.desiredSkills,
  budgetMonthlyCents: row.budgetMonthlyCents,
  spentMonthlyCents: row.spentMonthlyCents,
  sourceIssueId: row.sourceIssueId,
  sourceIssueIds: row.sourceIssueIds,
  lastHeartbeatAt: isoOrNull(row.lastHeartbeatAt),
  terminatedAt: isoOrNull(row.terminatedAt),
  createdAt: new Date(row.createdAt).toISOString(),
  updatedAt: new Date(row.updatedAt).toISOString(),
});

export const chainLink = (row: AgentRow) => ({
  id: row.id,
  name: row.name,
  role: row.role,
  title: row.title,
});

/** All agents of a company, by id. Companies are small; reporting-line walks happen in memory. */
export type AgentsById = ReadonlyMap<string, AgentRow>;

export async function companyAgents(db: Db, companyId: string): Promise<Map<string, AgentRow>> {
  const rows = await db
    .select()
    .from(agents)
    .where(eq(agents.companyId, companyId))
    .orderBy(asc(agents.createdAt), asc(agents.name));
  return new Map(rows.map((row) => [row.id, row]));
}

/** The agent named in a path, or the 404 an unknown id or another company's agent gets. */
export async function findAgent(db: Db, actor: Actor, agentId: string): Promise<AgentRow> {
  const row = await db.select().from(agents).where(eq(agents.id, agentId)).get();
  return ensureVisible(db, actor, row, "Agent");
}

/** The agent and its whole company, for handlers that reason about reporting lines. */
export async function agentWithCompany(db: Db, actor: Actor, agentId: string) {
  const agent = await findAgent(db, actor, agentId);
  const byId = await companyAgents(db, agent.companyId);
  return { agent: byId.get(agent.id) ?? agent, byId };
}

/** Managers of `agent`, nearest first. Stops at a missing manager or a (corrupt) cycle. */
export function managersOf(byId: AgentsById, agent: AgentRow): AgentRow[] {
  const chain: AgentRow[] = [];
  const seen = new Set([agent.id]);
  let next = agent.reportsTo ? byId.get(agent.reportsTo) : undefined;
  while (next && !seen.has(next.id)) {
    chain.push(next);
    seen.add(next.id);
    next = next.reportsTo ? byId.get(next.reportsTo) : undefined;
  }
  return chain;
}

export const chainOfCommand = (byId: AgentsById, agent: AgentRow) => managersOf(byId, agent).map(chainLink);

/** Whether `managerId` sits above `agentId` in its reporting chain (not the agent itself). */
export const isAncestor = (byId: AgentsById, managerId: string, agentId: string): boolean => {
  const agent = byId.get(agentId);
  return agent !== undefined && managersOf(byId, agent).some((manager) => manager.id === managerId);
};

export const agentDetail = (byId: AgentsById, agent: AgentRow) => ({
  ...agentResource(agent),
  chainOfCommand: chainOfCommand(byId, agent),
});

/** How an agent caller relates to the target agent; board users pass every check. */
export type Relation = "self" | "ceo" | "ancestor";
const RELATION_WORDS: Record<Relation, string> = {
  self: "the agent itself",
  ceo: "the CEO",
  ancestor: "a manager above it",
};

/** The caller's current role (read with the company's agents, so it is as fresh as the target). */
const callerRole = (actor: AgentActor, byId: AgentsById) => byId.get(actor.agentId)?.role ?? actor.role;

export const isCeo = (actor: Actor, byId: AgentsById): boolean =>
  actor.type === "agent" && callerRole(actor, byId) === "ceo";

function holds(actor: AgentActor, target: AgentRow, byId: AgentsById, relation: Relation): boolean {
  if (relation === "self") return actor.agentId === target.id;
  if (relation === "ceo") return isCeo(actor, byId);
  return isAncestor(byId, actor.agentId, target.id);
}

/** 403 unless the caller is a board user or an agent in one of `relations` to `target`. */
export function authorize(
  actor: Actor,
  target: AgentRow,
  byId: AgentsById,
  relations: readonly Relation[],
  what: string,
): void {
  if (actor.type === "board") return;
  if (relations.some((relation) => holds(actor, target, byId, relation))) return;
  const who = ["board users", ...relations.map((relation) => RELATION_WORDS[relation])].join(", ");
  throw forbidden(`Only ${who} may ${what}`);
}

/**
 * The CEO agent may make company edits reserved for owners, so whoever holds its keys or decides what
 * it runs must be an owner (issue 25): minting it a key, changing its adapter or adapterConfig (a
 * command or environment the run, holding the CEO's key, executes), rolling its config back, or making
 * an agent the CEO. Agents keep their own rules (the CEO, its managers).
 */
export async function requireOwnerToSteerCeo(
  db: Db,
  actor: Actor,
  companyId: string,
  what: string,
): Promise<void> {
  if (actor.type === "board") await requireOwner(db, actor, companyId, what);
}

/** Terminated agents are read-only: every change answers this. */
export function ensureNotTerminated(agent: AgentRow): void {
  if (agent.status === "terminated") throw unprocessable("agent is terminated");
}

/**
 * A new manager for an agent: an existing, non-terminated agent of the same company that is neither
 * the agent itself nor one of its reports (which would close a loop).
 */
export function validateManager(byId: AgentsById, managerId: string, agentId: string | null): AgentRow {
  const manager = byId.get(managerId);
  if (!manager) throw unprocessable("reportsTo must be an agent of this company");
  if (manager.status === "terminated") throw unprocessable("reportsTo names a terminated agent");
  if (agentId !== null && (managerId === agentId || isAncestor(byId, agentId, managerId)))
    throw unprocessable("reportsTo would create a cycle in the reporting chain");
  return manager;
}

/**
 * Agents other than the CEO place agents only inside their own team: the new manager must be the
 * caller or one of its reports (a manager cannot staff another team).
 */
export function ensureWithinTeam(actor: Actor, byId: AgentsById, managerId: string | null): void {
  if (actor.type === "board" || isCeo(actor, byId)) return;
  if (managerId !== null && (managerId === actor.agentId || isAncestor(byId, actor.agentId, managerId)))
    return;
  throw forbidden("An agent may only place agents under itself or its own reports");
}

const SECOND_CEO = "This company already has a CEO";
export const AGENT_NAME_TAKEN = "An agent with this name already exists in the company";

/** One CEO per company: a second non-terminated one is a 422. */
export function ensureSingleCeo(byId: AgentsById, role: string, exceptId: string | null): void {
  if (role !== "ceo") return;
  const existing = [...byId.values()].find(
    (row) => row.role === "ceo" && row.status !== "terminated" && row.id !== exceptId,
  );
  if (existing) throw unprocessable(SECOND_CEO, { ceoAgentId: existing.id });
}

/**
 * Runs an agent insert or update. Two requests can both pass the checks above before either writes;
 * the loser then breaks a unique index and gets the answer the check would have given it: the name
 * index (company_id, name_key) a 409, the one-CEO index (company_id alone) a 422.
 */
export async function writeAgent<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    const text = error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : String(error);
    if (!text.includes("UNIQUE constraint failed")) throw error;
    if (text.includes("agents.name_key")) throw conflict(AGENT_NAME_TAKEN);
    if (text.includes("agents.company_id")) throw unprocessable(SECOND_CEO);
    throw error;
  }
}

/** Names are unique per company ignoring case (mentions match that way), terminated agents included. */
export function nameTaken(byId: AgentsById, name: string, exceptId: string | null): boolean {
  const key = name.toLowerCase();
  return [...byId.values()].some((row) => row.nameKey === key && row.id !== exceptId);
}

/** `db.batch` wants a non-empty tuple; handlers assemble their statements as a list. */
export async function commit(db: Db, items: BatchItem<"sqlite">[]): Promise<void> {
  const [first, ...rest] = items;
  if (first) await db.batch([first, ...rest]);
}
