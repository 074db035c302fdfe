// Cost events: who may report, reference checks, monthly spend and the read-outs.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { recomputeAllSpend } from "../../../../workers/control/costs/store";
import { database } from "../../../../workers/db/client";
import { call } from "../../helpers";
import { activityOf, boardUser, seedAgent, seedCompany, seedIssue, seedTwoTenants } from "../helpers";

type CostEvent = {
  id: string;
  agentId: string;
  projectId: string | null;
  costCents: number;
  occurredAt: string;
};

const nowIso = () => new Date().toISOString();
/** The middle of the previous UTC month: outside "this month" whatever day the suite runs. */
function lastMonthIso(): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15)).toISOString();
}

const event = (agentId: string, costCents: number, extra: Record<string, unknown> = {}) => ({
  agentId,
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  billingType: "metered_api",
  inputTokens: 1000,
  cachedInputTokens: 200,
  outputTokens: 300,
  costCents,
  occurredAt: nowIso(),
  ...extra,
});

async function spentOf(table: "agents" | "companies", id: string): Promise<number> {
  const row = await env.DB.prepare(`SELECT spent_monthly_cents AS spent FROM ${table} WHERE id = ?`)
    .bind(id)
    .first<{ spent: number }>();
  return row?.spent ?? -1;
}

async function createProject(companyId: string, headers: Record<string, string>, name: string) {
  const res = await call<{ id: string }>("POST", `/api/companies/${companyId}/projects`, {
    headers,
    body: { name },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

describe("POST /companies/:companyId/cost-events", () => {
  it("records the event and recomputes the agent's and the company's monthly spend", async () => {
    const { owner, company, agent } = await seedTwoTenants();
    const first = await call<CostEvent>("POST", `/api/companies/${company.id}/cost-events`, {
      headers: owner.headers,
      body: event(agent.id, 250),
    });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toMatchObject({
      agentId: agent.id,
      companyId: company.id,
      provider: "anthropic",
      billingType: "metered_api",
      inputTokens: 1000,
      cachedInputTokens: 200,
      outputTokens: 300,
      costCents: 250,
      createdByUserId: owner.userId,
      createdByAgentId: null,
    });
    const second = await call("POST", `/api/companies/${company.id}/cost-events`, {
      headers: agent.headers,
      body: { agentId: agent.id, provider: "openai", costCents: 100, occurredAt: nowIso() },
    });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ billingType: "unknown", inputTokens: 0, outputTokens: 0 });
    expect(await spentOf("agents", agent.id)).toBe(350);
    expect(await spentOf("companies", company.id)).toBe(350);
    expect((await activityOf(first.body.id)).map((a) => a.action)).toEqual(["cost.reported"]);
  });

  it("counts only the current UTC month in spentMonthlyCents", async () => {
    const { owner, company, agent } = await seedTwoTenants();
    const path = `/api/companies/${company.id}/cost-events`;
    const old = await call("POST", path, {
      headers: owner.headers,
      body: event(agent.id, 900, { occurredAt: lastMonthIso() }),
    });
    expect(old.status).toBe(201);
    expect(await spentOf("agents", agent.id)).toBe(0);
    await call("POST", path, { headers: owner.headers, body: event(agent.id, 40) });
    expect(await spentOf("agents", agent.id)).toBe(40);
    expect(await spentOf("companies", company.id)).toBe(40);
  });

  it("recomputeAllSpend brings stored spend back to this month's events (month rollover)", async () => {
    const { owner, company, agent } = await seedTwoTenants();
    await call("POST", `/api/companies/${company.id}/cost-events`, {
      headers: owner.headers,
      body: event(agent.id, 70),
    });
    // As if last month's total were still stored after the month changed.
    await env.DB.batch([
      env.DB.prepare("UPDATE agents SET spent_monthly_cents = 5000 WHERE id = ?").bind(agent.id),
      env.DB.prepare("UPDATE companies SET spent_monthly_cents = 5000 WHERE id = ?").bind(company.id),
    ]);
    await recomputeAllSpend(database(env.DB));
    expect(await spentOf("agents", agent.id)).toBe(70);
    expect(await spentOf("companies", company.id)).toBe(70);
  });

  it("lets an agent report only its own costs", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await seedAgent(company.id);
    const other = await seedAgent(company.id);
    const res = await call<{ error: string }>("POST", `/api/companies/${company.id}/cost-events`, {
      headers: agent.headers,
      body: event(other.id, 10),
    });
    expect(res.status).toBe(403);
    expect(await spentOf("agents", other.id)).toBe(0);
    const own = await call<CostEvent>("POST", `/api/companies/${company.id}/cost-events`, {
      headers: agent.headers,
      body: event(agent.id, 10),
    });
    expect(own.status).toBe(201);
    expect(own.body).toMatchObject({ createdByAgentId: agent.id, createdByUserId: null });
  });

  it("answers 422 naming the field for ids outside the company, 404 for another company, 400 for bad bodies", async () => {
    const { owner, company, agent, other, foreignAgent, outsider } = await seedTwoTenants();
    const foreignIssue = await seedIssue(other);
    const path = `/api/companies/${company.id}/cost-events`;
    const cases: Array<[Record<string, unknown>, string]> = [
      [event(foreignAgent.id, 1), "agentId"],
      [event(agent.id, 1, { issueId: foreignIssue.id }), "issueId"],
      [event(agent.id, 1, { projectId: crypto.randomUUID() }), "projectId"],
      [event(agent.id, 1, { heartbeatRunId: crypto.randomUUID() }), "heartbeatRunId"],
    ];
    for (const [body, field] of cases) {
      const res = await call<{ error: string }>("POST", path, { headers: owner.headers, body });
      expect(res.status, field).toBe(422);
      expect(res.body.error).toContain(field);
    }
    const hidden = await call("POST", path, { headers: outsider.headers, body: event(agent.id, 1) });
    expect(hidden.status).toBe(404);
    const bad: Array<Record<string, unknown>> = [
      { ...event(agent.id, 1), extra: true },
      { ...event(agent.id, -1) },
      { ...event(agent.id, 1.5) },
      { ...event(agent.id, 1), occurredAt: "yesterday" },
      { ...event(agent.id, 1), billingType: "free" },
      { agentId: agent.id, provider: "x", occurredAt: nowIso() },
    ];
    for (const body of bad) {
      const res = await call("POST", path, { headers: owner.headers, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect(await spentOf("agents", agent.id)).toBe(0);
  });
});

describe("cost read-outs", () => {
  it("summarise the month, per agent and per project (an issue's project by default)", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const alpha = await seedAgent(company.id, { name: `Alpha ${crypto.randomUUID().slice(0, 4)}` });
    const beta = await seedAgent(company.id, { name: `Beta ${crypto.randomUUID().slice(0, 4)}` });
    const projectId = await createProject(company.id, owner.headers, "Website");
    const issue = await seedIssue(company);
    await env.DB.prepare("UPDATE issues SET project_id = ? WHERE id = ?").bind(projectId, issue.id).run();
    await env.DB.prepare("UPDATE companies SET budget_monthly_cents = 2000 WHERE id = ?")
      .bind(company.id)
      .run();
    const path = `/api/companies/${company.id}/cost-events`;
    const viaIssue = await call<CostEvent>("POST", path, {
      headers: owner.headers,
      body: event(alpha.id, 300, { issueId: issue.id }),
    });
    expect(viaIssue.body.projectId).toBe(projectId);
    await call("POST", path, { headers: owner.headers, body: event(alpha.id, 200) });
    await call("POST", path, { headers: owner.headers, body: event(beta.id, 700, { projectId }) });
    await call("POST", path, {
      headers: owner.headers,
      body: event(beta.id, 5000, { occurredAt: lastMonthIso() }),
    });

    const summary = await call("GET", `/api/companies/${company.id}/costs/summary`, {
      headers: alpha.headers,
    });
    expect(summary.status).toBe(200);
    expect(summary.body).toMatchObject({
      companyId: company.id,
      spendCents: 1200,
      budgetCents: 2000,
      utilizationPercent: 60,
    });
    const last = lastMonthIso();
    const ranged = await call(
      "GET",
      `/api/companies/${company.id}/costs/summary?from=${last.slice(0, 8)}01T00:00:00Z&to=${last.slice(0, 8)}28T00:00:00Z`,
      { headers: owner.headers },
    );
    expect(ranged.body).toMatchObject({ spendCents: 5000 });

    const byAgent = await call<Array<Record<string, unknown>>>(
      "GET",
      `/api/companies/${company.id}/costs/by-agent`,
      { headers: owner.headers },
    );
    expect(byAgent.status).toBe(200);
    expect(byAgent.body).toEqual([
      {
        agentId: beta.id,
        agentName: beta.name,
        agentStatus: "idle",
        costCents: 700,
        inputTokens: 1000,
        cachedInputTokens: 200,
        outputTokens: 300,
        eventCount: 1,
      },
      {
        agentId: alpha.id,
        agentName: alpha.name,
        agentStatus: "idle",
        costCents: 500,
        inputTokens: 2000,
        cachedInputTokens: 400,
        outputTokens: 600,
        eventCount: 2,
      },
    ]);

    const byProject = await call<Array<Record<string, unknown>>>(
      "GET",
      `/api/companies/${company.id}/costs/by-project`,
      { headers: owner.headers },
    );
    expect(byProject.body.map((row) => [row.projectId, row.projectName, row.costCents])).toEqual([
      [projectId, "Website", 1000],
      [null, null, 200],
    ]);
  });

  it("reject a reversed range (422) and hide other companies (404)", async () => {
    const { owner, company, outsider } = await seedTwoTenants();
    const reversed = await call(
      "GET",
      `/api/companies/${company.id}/costs/summary?from=2025-02-01T00:00:00Z&to=2025-01-01T00:00:00Z`,
      { headers: owner.headers },
    );
    expect(reversed.status).toBe(422);
    const bad = await call("GET", `/api/companies/${company.id}/costs/by-agent?from=soon`, {
      headers: owner.headers,
    });
    expect(bad.status).toBe(400);
    for (const view of ["summary", "by-agent", "by-project"]) {
      const res = await call("GET", `/api/companies/${company.id}/costs/${view}`, {
        headers: outsider.headers,
      });
      expect(res.status, view).toBe(404);
    }
  });
});
