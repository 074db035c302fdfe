import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { type BoardUser, boardUser, type SeededCompany, seedAgent, seedCompany, seedIssue } from "../helpers";

type Dashboard = {
  companyId: string;
  agents: { total: number; byStatus: Record<string, number> };
  issues: { total: number; open: number; byStatus: Record<string, number> };
  spend: { spentMonthlyCents: number; budgetMonthlyCents: number; utilizationPercent: number };
  staleTasks: Array<{
    id: string;
    identifier: string;
    title: string;
    assigneeAgentId: string | null;
    updatedAt: string;
  }>;
  pendingApprovals: number;
};
type Activity = {
  id: string;
  action: string;
  actorType: string;
  actorId: string;
  entityType: string;
  entityId: string;
  details: Record<string, unknown>;
  createdAt: string;
};

let owner: BoardUser;

beforeAll(async () => {
  owner = await boardUser();
});

const DAY = 24 * 60 * 60 * 1000;

async function seedApproval(companyId: string, status: string) {
  const now = Date.now();
  await env.DB.prepare(
    `INSERT INTO approvals (id, company_id, type, status, payload, created_at, updated_at)
     VALUES (?, ?, 'hire_agent', ?, '{}', ?, ?)`,
  )
    .bind(crypto.randomUUID(), companyId, status, now, now)
    .run();
}

describe("GET /api/companies/{id}/dashboard", () => {
  let company: SeededCompany;
  let worker: Awaited<ReturnType<typeof seedAgent>>;
  let staleId: string;

  beforeAll(async () => {
    company = await seedCompany(owner);
    worker = await seedAgent(company.id, { status: "running" });
    await seedAgent(company.id);
    await seedAgent(company.id, { status: "paused" });
    await seedAgent(company.id, { status: "pending_approval" });
    const stale = await seedIssue(company, {
      status: "in_progress",
      assigneeAgentId: worker.id,
      title: "Old work",
    });
    staleId = stale.id;
    await env.DB.prepare("UPDATE issues SET updated_at = ? WHERE id = ?")
      .bind(Date.now() - DAY - 60_000, stale.id)
      .run();
    await seedIssue(company, { status: "in_progress", assigneeAgentId: worker.id });
    await seedIssue(company, { status: "todo" });
    await seedIssue(company, { status: "todo" });
    await seedIssue(company, { status: "done" });
    await seedIssue(company, { status: "cancelled" });
    await seedApproval(company.id, "pending");
    await seedApproval(company.id, "pending");
    await seedApproval(company.id, "approved");
    await env.DB.prepare(
      "UPDATE companies SET budget_monthly_cents = 20000, spent_monthly_cents = 5000 WHERE id = ?",
    )
      .bind(company.id)
      .run();
  });

  it("counts agents and issues by status, spend, stale tasks and pending approvals", async () => {
    const res = await call<Dashboard>("GET", `/api/companies/${company.id}/dashboard`, {
      headers: owner.headers,
    });
    expect(res.status).toBe(200);
    expect(res.body.companyId).toBe(company.id);
    expect(res.body.agents).toEqual({
      total: 4,
      byStatus: { pending_approval: 1, idle: 1, running: 1, paused: 1, error: 0, terminated: 0 },
    });
    expect(res.body.issues).toEqual({
      total: 6,
      open: 4,
      byStatus: { backlog: 0, todo: 2, in_progress: 2, in_review: 0, blocked: 0, done: 1, cancelled: 1 },
    });
    expect(res.body.spend).toEqual({
      spentMonthlyCents: 5000,
      budgetMonthlyCents: 20000,
      utilizationPercent: 25,
    });
    expect(res.body.staleTasks).toHaveLength(1);
    expect(res.body.staleTasks[0]).toMatchObject({
      id: staleId,
      title: "Old work",
      assigneeAgentId: worker.id,
    });
    expect(res.body.staleTasks[0]?.identifier).toMatch(new RegExp(`^${company.issuePrefix}-\\d+$`));
    expect(res.body.pendingApprovals).toBe(2);
  });

  it("reports zeros for an empty company and 0 % without a budget", async () => {
    const empty = await seedCompany(owner);
    const res = await call<Dashboard>("GET", `/api/companies/${empty.id}/dashboard`, {
      headers: owner.headers,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      agents: { total: 0 },
      issues: { total: 0, open: 0 },
      spend: { spentMonthlyCents: 0, budgetMonthlyCents: 0, utilizationPercent: 0 },
      staleTasks: [],
      pendingApprovals: 0,
    });
  });

  it("is visible to the company's agents and 404 to others", async () => {
    expect(
      (await call("GET", `/api/companies/${company.id}/dashboard`, { headers: worker.headers })).status,
    ).toBe(200);
    const outsider = await boardUser();
    const foreignAgent = await seedAgent((await seedCompany(outsider)).id);
    for (const headers of [outsider.headers, foreignAgent.headers]) {
      expect((await call("GET", `/api/companies/${company.id}/dashboard`, { headers })).status).toBe(404);
    }
  });
});

describe("GET /api/companies/{id}/activity", () => {
  let company: SeededCompany;
  let ceo: Awaited<ReturnType<typeof seedAgent>>;

  beforeAll(async () => {
    company = await seedCompany(owner);
    ceo = await seedAgent(company.id, { role: "ceo" });
    const patch = (headers: Record<string, string>, body: unknown) =>
      call("PATCH", `/api/companies/${company.id}`, { body, headers });
    expect((await patch(owner.headers, { name: "First" })).status).toBe(200);
    expect((await patch(ceo.headers, { name: "Second" })).status).toBe(200);
    const goal = await call<{ id: string }>("POST", `/api/companies/${company.id}/goals`, {
      body: { title: "Grow" },
      headers: ceo.headers,
    });
    expect(goal.status).toBe(201);
    expect((await patch(owner.headers, { description: "Third" })).status).toBe(200);
  });

  const activity = (query = "", headers = owner.headers) =>
    call<Activity[]>("GET", `/api/companies/${company.id}/activity${query}`, { headers });

  it("returns the log newest first", async () => {
    const res = await activity();
    expect(res.status).toBe(200);
    expect(res.body.map((entry) => entry.action)).toEqual([
      "company.updated",
      "goal.created",
      "company.updated",
      "company.updated",
    ]);
    expect(res.body[0]).toMatchObject({
      actorType: "user",
      actorId: owner.userId,
      entityType: "company",
      entityId: company.id,
      details: { changedKeys: ["description"] },
    });
  });

  it("filters by agentId, entityType and entityId, and honours limit", async () => {
    const byAgent = await activity(`?agentId=${ceo.id}`);
    expect(byAgent.body.map((entry) => entry.action)).toEqual(["goal.created", "company.updated"]);
    const goals = await activity("?entityType=goal");
    expect(goals.body).toHaveLength(1);
    const byEntity = await activity(`?entityId=${company.id}`);
    expect(byEntity.body).toHaveLength(3);
    const limited = await activity("?limit=2", ceo.headers);
    expect(limited.status).toBe(200);
    expect(limited.body).toHaveLength(2);
  });

  it("filters by actorType, action (exact or a prefix ending in a dot) and dates", async () => {
    const actions = async (query: string) => (await activity(query)).body.map((entry) => entry.action);
    expect(await actions("?actorType=agent")).toEqual(["goal.created", "company.updated"]);
    expect(await actions("?actorType=user&action=company.updated")).toEqual([
      "company.updated",
      "company.updated",
    ]);
    expect(await actions("?action=goal.")).toEqual(["goal.created"]);
    expect(await actions("?action=goal")).toEqual([]);
    const all = (await activity()).body;
    const newest = all[0]?.createdAt ?? "";
    expect(await actions(`?since=${newest}`)).toContain("company.updated");
    expect(await actions("?since=2999-01-01")).toEqual([]);
    expect(await actions("?until=2000-01-01")).toEqual([]);
    expect(
      (await actions(`?until=${encodeURIComponent(new Date(Date.now() + DAY).toISOString())}`)).length,
    ).toBe(4);
  });

  it("pages with before=<the last entry's id>, without repeating or skipping an entry", async () => {
    const all = (await activity()).body.map((entry) => entry.id);
    const first = (await activity("?limit=3")).body.map((entry) => entry.id);
    const rest = (await activity(`?limit=3&before=${first[2]}`)).body.map((entry) => entry.id);
    expect([...first, ...rest]).toEqual(all);
  });

  it("refuses a bad date, action or cursor with a 400 naming the parameter", async () => {
    const bad = await activity("?since=yesterday");
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("since must be a date");
    expect((await activity("?until=2026-02-31")).status).toBe(400);
    expect((await activity("?action=DROP%20TABLE")).status).toBe(400);
    const cursor = await activity("?before=not-an-entry");
    expect(cursor.status).toBe(400);
    expect(JSON.stringify(cursor.body)).toContain("before: no such activity entry");
  });

  it("answers 400 for a limit outside 1..200 and 404 across companies", async () => {
    expect((await activity("?limit=0")).status).toBe(400);
    expect((await activity("?limit=201")).status).toBe(400);
    expect((await activity("?limit=ten")).status).toBe(400);
    const outsider = await boardUser();
    expect((await activity("", outsider.headers)).status).toBe(404);
  });
});
