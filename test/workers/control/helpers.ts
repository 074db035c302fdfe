// Control-plane fixtures for workerd suites. Companies, agents and agent keys are seeded straight
// into D1 so each suite depends only on the endpoints it tests; the endpoints that create them are
// covered through HTTP by their own suites.
import { env } from "cloudflare:workers";
import { generateAgentKey } from "../../../workers/auth/agent-key-format";
import { asKey, createUser, generateKey } from "../helpers";

export interface BoardUser {
  userId: string;
  key: string;
  headers: Record<string, string>;
}

/** A fresh OWNER-role foundation user with an API key: a board user once made a company member. */
export async function boardUser(): Promise<BoardUser> {
  const session = await createUser("OWNER");
  const key = await generateKey(session);
  return { userId: session.userId, key, headers: asKey(key) };
}

export interface SeededCompany {
  id: string;
  name: string;
  issuePrefix: string;
}

const randomPrefix = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(6)), (b) => String.fromCharCode(65 + (b % 26))).join("");

/** A company with `owner` as its owning member (and any further board `members`). */
export async function seedCompany(
  owner: BoardUser,
  options: { name?: string; requireBoardApprovalForNewAgents?: boolean; members?: BoardUser[] } = {},
): Promise<SeededCompany> {
  const id = crypto.randomUUID();
  const name = options.name ?? `Company ${id.slice(0, 8)}`;
  const issuePrefix = randomPrefix();
  const now = Date.now();
  const statements = [
    env.DB.prepare(
      `INSERT INTO companies (id, name, status, issue_prefix, issue_counter, budget_monthly_cents,
         spent_monthly_cents, require_board_approval_for_new_agents, created_at, updated_at)
       VALUES (?, ?, 'active', ?, 0, 0, 0, ?, ?, ?)`,
    ).bind(id, name, issuePrefix, options.requireBoardApprovalForNewAgents === false ? 0 : 1, now, now),
    ...[owner, ...(options.members ?? [])].map((member, index) =>
      env.DB.prepare(
        "INSERT INTO company_memberships (company_id, user_id, role, created_at) VALUES (?, ?, ?, ?)",
      ).bind(id, member.userId, index === 0 ? "owner" : "member", now),
    ),
  ];
  await env.DB.batch(statements);
  return { id, name, issuePrefix };
}

/** Makes an existing user a member of the company with `role`. */
export async function addMembership(
  companyId: string,
  userId: string,
  role: "owner" | "member" | "viewer",
): Promise<void> {
  await env.DB.prepare(
    "INSERT INTO company_memberships (company_id, user_id, role, created_at) VALUES (?, ?, ?, ?)",
  )
    .bind(companyId, userId, role, Date.now())
    .run();
}

export interface SeededAgent {
  id: string;
  companyId: string;
  name: string;
  /** `Authorization: Bearer <key>` for this agent. */
  headers: Record<string, string>;
  key: string;
}

export interface AgentSeed {
  name?: string;
  role?: string;
  reportsTo?: string | null;
  status?: string;
  budgetMonthlyCents?: number;
  spentMonthlyCents?: number;
  adapterConfig?: Record<string, unknown>;
}

/** An agent (idle by default) with one active key. */
export async function seedAgent(companyId: string, seed: AgentSeed = {}): Promise<SeededAgent> {
  const id = crypto.randomUUID();
  const name = seed.name ?? `Agent ${id.slice(0, 8)}`;
  const now = Date.now();
  const generated = await generateAgentKey(id);
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO agents (id, company_id, name, name_key, role, status, reports_to, adapter_type,
         adapter_config, runtime_config, desired_skills, budget_monthly_cents, spent_monthly_cents,
         source_issue_ids, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'coder_local', ?, '{}', '[]', ?, ?, '[]', ?, ?)`,
    ).bind(
      id,
      companyId,
      name,
      name.toLowerCase(),
      seed.role ?? "engineer",
      seed.status ?? "idle",
      seed.reportsTo ?? null,
      JSON.stringify(seed.adapterConfig ?? { cwd: "/work" }),
      seed.budgetMonthlyCents ?? 0,
      seed.spentMonthlyCents ?? 0,
      now,
      now,
    ),
    env.DB.prepare(
      `INSERT INTO agent_api_keys (id, agent_id, company_id, name, key_hash, display_prefix, created_at)
       VALUES (?, ?, ?, 'seed', ?, ?, ?)`,
    ).bind(crypto.randomUUID(), id, companyId, generated.hash, generated.displayPrefix, now),
  ]);
  return { id, companyId, name, key: generated.key, headers: { Authorization: `Bearer ${generated.key}` } };
}

/** A CEO, a manager reporting to it and two engineers reporting to the manager: the usual org. */
export async function seedOrg(companyId: string) {
  const ceo = await seedAgent(companyId, { name: `CEO ${crypto.randomUUID().slice(0, 6)}`, role: "ceo" });
  const manager = await seedAgent(companyId, { role: "cto", reportsTo: ceo.id });
  const engineer = await seedAgent(companyId, { role: "engineer", reportsTo: manager.id });
  const peer = await seedAgent(companyId, { role: "engineer", reportsTo: manager.id });
  return { ceo, manager, engineer, peer };
}

export interface SeededIssue {
  id: string;
  identifier: string;
}

/** An issue inserted directly (numbered like the API does), for suites that test what happens next. */
export async function seedIssue(
  company: SeededCompany,
  fields: {
    title?: string;
    status?: string;
    priority?: string;
    assigneeAgentId?: string | null;
    createdByAgentId?: string | null;
    createdByUserId?: string | null;
    parentId?: string | null;
  } = {},
): Promise<SeededIssue> {
  const id = crypto.randomUUID();
  const now = Date.now();
  const priority = fields.priority ?? "medium";
  const rank = ["critical", "high", "medium", "low"].indexOf(priority);
  await env.DB.batch([
    env.DB.prepare("UPDATE companies SET issue_counter = issue_counter + 1 WHERE id = ?").bind(company.id),
    env.DB.prepare(
      `INSERT INTO issues (id, company_id, issue_number, identifier, title, status, priority, priority_rank,
         assignee_agent_id, created_by_agent_id, created_by_user_id, parent_id, created_at, updated_at)
       SELECT ?, c.id, c.issue_counter, c.issue_prefix || '-' || c.issue_counter, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
       FROM companies c WHERE c.id = ?`,
    ).bind(
      id,
      fields.title ?? `Issue ${id.slice(0, 8)}`,
      fields.status ?? "todo",
      priority,
      rank,
      fields.assigneeAgentId ?? null,
      fields.createdByAgentId ?? null,
      fields.createdByUserId ?? null,
      fields.parentId ?? null,
      now,
      now,
      company.id,
    ),
  ]);
  const row = await env.DB.prepare("SELECT identifier FROM issues WHERE id = ?")
    .bind(id)
    .first<{ identifier: string }>();
  return { id, identifier: row?.identifier ?? "" };
}

/** Activity rows of one entity, oldest first. */
export async function activityOf(
  entityId: string,
): Promise<Array<{ action: string; actor_type: string; actor_id: string }>> {
  const rows = await env.DB.prepare(
    "SELECT action, actor_type, actor_id FROM activity_log WHERE entity_id = ? ORDER BY created_at, rowid",
  )
    .bind(entityId)
    .all<{ action: string; actor_type: string; actor_id: string }>();
  return rows.results;
}

/** One board user, their company and one agent in it: the cast of most single-tenant suites. */
export async function seedTenant(): Promise<{
  board: BoardUser;
  company: SeededCompany;
  agent: SeededAgent;
}> {
  const board = await boardUser();
  const company = await seedCompany(board);
  return { board, company, agent: await seedAgent(company.id) };
}

/** Two tenants, each with its own board user and agent: for the 404-across-companies checks. */
export async function seedTwoTenants() {
  const mine = await seedTenant();
  const theirs = await seedTenant();
  return {
    owner: mine.board,
    company: mine.company,
    agent: mine.agent,
    outsider: theirs.board,
    other: theirs.company,
    foreignAgent: theirs.agent,
  };
}

/** A company-level goal inserted directly; returns its id. */
export async function seedGoal(companyId: string): Promise<string> {
  const id = crypto.randomUUID();
  const now = Date.now();
  await env.DB.prepare(
    `INSERT INTO goals (id, company_id, title, level, status, created_at, updated_at)
     VALUES (?, ?, 'A goal', 'company', 'active', ?, ?)`,
  )
    .bind(id, companyId, now, now)
    .run();
  return id;
}
