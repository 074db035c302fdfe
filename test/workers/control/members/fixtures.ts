// Members fixtures: board users joined with a role, and one of every company-owned resource the
// role tests aim writes at.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { call } from "../../helpers";
import { type BoardUser, boardUser, type SeededCompany, seedAgent, seedCompany, seedIssue } from "../helpers";

export type Role = "owner" | "member" | "viewer";

export async function joinAs(company: SeededCompany, role: Role, user?: BoardUser): Promise<BoardUser> {
  const person = user ?? (await boardUser());
  await env.DB.prepare(
    "INSERT INTO company_memberships (company_id, user_id, role, created_at) VALUES (?, ?, ?, ?)",
  )
    .bind(company.id, person.userId, role, Date.now())
    .run();
  return person;
}

/** An owner's company with a member and a viewer. */
export async function seedTeam() {
  const owner = await boardUser();
  const company = await seedCompany(owner);
  const member = await joinAs(company, "member");
  const viewer = await joinAs(company, "viewer");
  return { owner, company, member, viewer };
}

export async function roleOf(companyId: string, userId: string): Promise<string | null> {
  const row = await env.DB.prepare(
    "SELECT role FROM company_memberships WHERE company_id = ? AND user_id = ?",
  )
    .bind(companyId, userId)
    .first<{ role: string }>();
  return row?.role ?? null;
}

async function created(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await call<{ id: string }>(method, path, { headers, body });
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body.id;
}

/**
 * One row of each kind a control-plane path can start with (`/agents/{id}`, `/issues/{id}`, …),
 * created by the owner: the values for the path parameters of the route walk.
 */
export async function seedEveryResource(
  owner: BoardUser,
  company: SeededCompany,
): Promise<Record<string, string>> {
  const h = owner.headers;
  const c = `/api/companies/${company.id}`;
  const agent = await seedAgent(company.id, { role: "ceo" });
  const issue = await seedIssue(company);
  const projectId = await created("POST", `${c}/projects`, h, { name: "Walk" });
  const goalId = await created("POST", `${c}/goals`, h, { title: "Walk" });
  const routineId = await created("POST", `${c}/routines`, h, {
    title: "Walk",
    assigneeAgentId: agent.id,
    projectId,
  });
  const trigger = await call<{ trigger: { id: string } }>("POST", `/api/routines/${routineId}/triggers`, {
    headers: h,
    body: { kind: "api" },
  });
  expect(trigger.status, JSON.stringify(trigger.body)).toBe(201);
  const triggerId = trigger.body.trigger.id;
  const approvalId = await created("POST", `${c}/approvals`, h, {
    type: "approve_ceo_strategy",
    payload: { plan: "walk" },
  });
  const secretId = await created("POST", `${c}/secrets`, h, { name: "Walk", value: "s3cret-walk" });
  const runId = await created("POST", `/api/agents/${agent.id}/heartbeat/invoke`, h);
  return {
    companyId: company.id,
    agentId: agent.id,
    issueId: issue.id,
    projectId,
    goalId,
    routineId,
    triggerId,
    approvalId,
    secretId,
    runId,
  };
}
