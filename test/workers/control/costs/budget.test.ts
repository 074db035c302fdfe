// Budgets: above 80 % the heartbeat context says prioritise; the cost event that reaches 100 % pauses
// the agent (reason budget), cancels its queued runs, and its next wake is refused.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { recordCostEvent } from "../../../../workers/control/costs/record";
import { database } from "../../../../workers/db/client";
import { call } from "../../helpers";
import { activityOf, boardUser, seedAgent, seedCompany, seedIssue } from "../helpers";

type Run = { id: string; status: string; errorReason: string | null };

const cost = (agentId: string, costCents: number) => ({
  agentId,
  provider: "anthropic",
  costCents,
  occurredAt: new Date().toISOString(),
});

async function agentRow(id: string) {
  return env.DB.prepare("SELECT status, pause_reason, spent_monthly_cents FROM agents WHERE id = ?")
    .bind(id)
    .first<{ status: string; pause_reason: string | null; spent_monthly_cents: number }>();
}

async function runRow(id: string) {
  return env.DB.prepare("SELECT status, error_reason FROM heartbeat_runs WHERE id = ?")
    .bind(id)
    .first<{ status: string; error_reason: string | null }>();
}

async function budgetGuidance(issueId: string, headers: Record<string, string>) {
  const res = await call<{ budget: { guidance: string; utilizationPercent: number | null } }>(
    "GET",
    `/api/issues/${issueId}/heartbeat-context`,
    { headers },
  );
  expect(res.status).toBe(200);
  return res.body.budget;
}

describe("budget enforcement", () => {
  it("pauses the agent on the event that reaches 100 % and refuses its next wake", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id, { budgetMonthlyCents: 1000 });
    const path = `/api/companies/${company.id}/cost-events`;

    const under = await call("POST", path, { headers: agent.headers, body: cost(agent.id, 600) });
    expect(under.status).toBe(201);
    expect(await agentRow(agent.id)).toMatchObject({ status: "idle", pause_reason: null });

    const queued = await call<Run>("POST", `/api/agents/${agent.id}/heartbeat/invoke`, {
      headers: owner.headers,
    });
    expect(queued.status).toBe(202);
    expect(queued.body.status).toBe("queued");

    const crossing = await call<{ id: string }>("POST", path, {
      headers: agent.headers,
      body: cost(agent.id, 400),
    });
    expect(crossing.status).toBe(201);
    expect(await agentRow(agent.id)).toEqual({
      status: "paused",
      pause_reason: "budget",
      spent_monthly_cents: 1000,
    });
    expect(await runRow(queued.body.id)).toEqual({ status: "cancelled", error_reason: "agent_over_budget" });
    const actions = (await activityOf(agent.id)).map((row) => row.action);
    expect(actions).toContain("agent.budget_paused");

    const refused = await call<{ details: { errorReason: string; run: Run } }>(
      "POST",
      `/api/agents/${agent.id}/heartbeat/invoke`,
      { headers: owner.headers },
    );
    expect(refused.status).toBe(409);
    expect(["agent_paused", "agent_over_budget"]).toContain(refused.body.details.errorReason);
    expect(refused.body.details.run.status).toBe("cancelled");

    // The paused agent still authenticates (to read and report), and a further cost changes nothing.
    const after = await call("POST", path, { headers: agent.headers, body: cost(agent.id, 5) });
    expect(after.status).toBe(201);
    expect((await activityOf(agent.id)).filter((row) => row.action === "agent.budget_paused")).toHaveLength(
      1,
    );
  });

  it("leaves agents without a budget, and pending or terminated agents, as they are", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const unlimited = await seedAgent(company.id, { budgetMonthlyCents: 0 });
    const terminated = await seedAgent(company.id, { budgetMonthlyCents: 10, status: "terminated" });
    const pending = await seedAgent(company.id, { budgetMonthlyCents: 10, status: "pending_approval" });
    const path = `/api/companies/${company.id}/cost-events`;
    for (const agent of [unlimited, terminated, pending]) {
      const res = await call("POST", path, { headers: owner.headers, body: cost(agent.id, 50_000) });
      expect(res.status).toBe(201);
    }
    expect((await agentRow(unlimited.id))?.status).toBe("idle");
    expect((await agentRow(terminated.id))?.status).toBe("terminated");
    expect((await agentRow(pending.id))?.status).toBe("pending_approval");
  });

  it("pauses a running agent and cancels every queued run", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id, { budgetMonthlyCents: 100, status: "running" });
    const first = await seedIssue(company, { assigneeAgentId: agent.id });
    const second = await seedIssue(company, { assigneeAgentId: agent.id });
    const now = Date.now();
    const runIds = [crypto.randomUUID(), crypto.randomUUID()];
    await env.DB.batch(
      [first.id, second.id].map((issueId, index) =>
        env.DB.prepare(
          `INSERT INTO heartbeat_runs (id, company_id, agent_id, status, invocation_source, wake_reason,
             issue_id, coalesced_count, cost_cents, created_at)
           VALUES (?, ?, ?, 'queued', 'mention', 'issue_comment_mentioned', ?, 0, 0, ?)`,
        ).bind(runIds[index], company.id, agent.id, issueId, now),
      ),
    );
    const res = await call("POST", `/api/companies/${company.id}/cost-events`, {
      headers: owner.headers,
      body: cost(agent.id, 150),
    });
    expect(res.status).toBe(201);
    expect(await agentRow(agent.id)).toMatchObject({ status: "paused", pause_reason: "budget" });
    for (const id of runIds)
      expect(await runRow(id)).toEqual({ status: "cancelled", error_reason: "agent_over_budget" });
  });

  it("tells the agent to prioritise above 80 % of its budget", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id, { budgetMonthlyCents: 1000 });
    const issue = await seedIssue(company, { assigneeAgentId: agent.id });
    const path = `/api/companies/${company.id}/cost-events`;

    await call("POST", path, { headers: agent.headers, body: cost(agent.id, 800) });
    expect(await budgetGuidance(issue.id, agent.headers)).toMatchObject({
      guidance: "normal",
      utilizationPercent: 80,
    });
    await call("POST", path, { headers: agent.headers, body: cost(agent.id, 50) });
    expect(await budgetGuidance(issue.id, agent.headers)).toMatchObject({
      guidance: "prioritise",
      utilizationPercent: 85,
    });
    expect((await agentRow(agent.id))?.status).toBe("idle");
  });

  it("recordCostEvent (the runner's finish path) enforces the same stop", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id, { budgetMonthlyCents: 100 });
    const row = await recordCostEvent(
      env,
      database(env.DB),
      {
        companyId: company.id,
        agentId: agent.id,
        issueId: null,
        projectId: null,
        heartbeatRunId: null,
        provider: "runner",
        model: null,
        billingType: "unknown",
        inputTokens: 0,
        cachedInputTokens: 0,
        outputTokens: 0,
        costCents: 100,
        occurredAt: Date.now(),
      },
      { type: "agent", agentId: agent.id, companyId: company.id },
    );
    expect(row.createdByAgentId).toBe(agent.id);
    expect(await agentRow(agent.id)).toEqual({
      status: "paused",
      pause_reason: "budget",
      spent_monthly_cents: 100,
    });
  });
});
