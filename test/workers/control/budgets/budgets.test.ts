// Budgets beyond the agent's and company's monthly ones (issue 32): a project's budget and lifetime
// budgets, set through PUT /budgets, listed with their spend; the incidents each threshold opens
// (soft at 80 %, hard at 100 %, once per crossing); a hard incident holds its scope — queued runs
// cancelled, running runs stopped with a cancel frame to their runner, new wakes stored cancelled,
// the claim refusing — until an owner raises the budget and resumes; runs carry the smallest
// remainder as their cap; spend by model and provider.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { eventually } from "../../patience";
import { activityOf, boardUser, seedAgent, seedCompany, seedIssue } from "../helpers";
import { claimOne, runnerFor } from "../runner-link";
import {
  type Budget,
  type Incident,
  incidents,
  inProject,
  invoke,
  type Json,
  project,
  putBudget,
  runRow,
  settleRuns,
  spend,
} from "./fixtures";

beforeEach(settleRuns);

describe("project and lifetime budgets", () => {
  it("a project's monthly budget: warning at 80 %, hard stop at 100 % (queued cancelled, running stopped, wakes held), raised and resumed", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id, { adapterConfig: { command: "sleep" } });
    const projectId = await project(company.id, owner.headers);
    const inside = await seedIssue(company, { assigneeAgentId: agent.id });
    const inside2 = await seedIssue(company, { assigneeAgentId: agent.id });
    const outside = await seedIssue(company, { assigneeAgentId: agent.id });
    await inProject(inside.id, projectId);
    await inProject(inside2.id, projectId);

    const set = await putBudget(company.id, owner.headers, {
      scope: "project",
      scopeId: projectId,
      window: "month",
      amountCents: 1000,
    });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      scope: "project",
      scopeId: projectId,
      scopeName: "Launch",
      window: "month",
      amountCents: 1000,
      spentCents: 0,
      status: "ok",
    });

    // A run on the project's issue is running on a runner, with the project's remainder as its cap.
    const running = await invoke(owner.headers, agent.id, inside.id);
    expect(running.status).toBe(202);
    const link = await runnerFor(owner, company.id);
    const claimed = await claimOne(link);
    expect(claimed.runId).toBe(running.body.id);
    expect(claimed.budgetCents).toBe(1000);

    // 850 of 1000 (charged through the issue): one soft incident, one budget.warning on the project.
    await spend(company.id, owner.headers, { agentId: agent.id, costCents: 850, issueId: inside.id });
    await spend(company.id, owner.headers, { agentId: agent.id, costCents: 10, issueId: inside.id });
    const soft = await incidents(company.id, owner.headers, "open");
    expect(soft).toMatchObject([
      { scope: "project", scopeId: projectId, threshold: "soft", spentCents: 850, amountCents: 1000 },
    ]);
    expect((await activityOf(projectId)).filter((row) => row.action === "budget.warning")).toHaveLength(1);

    // A wake queued on the other project issue, and one outside the project, before the crossing.
    const other = await seedAgent(company.id, { adapterConfig: { command: "sleep" } });
    const queuedInside = await invoke(owner.headers, other.id, inside2.id);
    const queuedOutside = await invoke(owner.headers, other.id, outside.id);
    expect([queuedInside.body.status, queuedOutside.body.status]).toEqual(["queued", "queued"]);

    // The crossing: hard incident (the soft one escalated), queued project run cancelled, the running one stopped.
    await spend(company.id, owner.headers, { agentId: agent.id, costCents: 200, issueId: inside.id });
    const open = await incidents(company.id, owner.headers, "open");
    expect(open).toMatchObject([
      { scope: "project", threshold: "hard", spentCents: 1060, amountCents: 1000 },
    ]);
    expect((await incidents(company.id, owner.headers, "resolved"))[0]).toMatchObject({
      threshold: "soft",
      resolution: "escalated",
    });
    expect(await runRow(queuedInside.body.id)).toEqual({
      status: "cancelled",
      error_reason: "project_over_budget",
    });
    expect((await runRow(queuedOutside.body.id))?.status).toBe("queued");
    await eventually(async () =>
      link.frames.some((frame) => frame.type === "cancel" && frame.runId === claimed.runId),
    );
    expect(await runRow(claimed.runId)).toEqual({ status: "running", error_reason: "budget_exceeded" });
    const stopped = await env.DB.prepare(
      "SELECT details FROM activity_log WHERE entity_id = ? AND action = 'heartbeat_run.budget_stopped'",
    )
      .bind(claimed.runId)
      .first<{ details: string }>();
    expect(JSON.parse(stopped?.details ?? "{}")).toMatchObject({
      budget: "project",
      incidentId: open[0]?.id,
    });

    // The runner reports the process gone with what it spent: charged to the issue's project.
    link.send({
      type: "finish",
      runId: claimed.runId,
      exitCode: null,
      timedOut: false,
      logFrames: 0,
      error: "stopped",
      costCents: 7,
    });
    await eventually(async () => (await runRow(claimed.runId))?.status === "cancelled");
    const byProject = await call<Json[]>("GET", `/api/companies/${company.id}/costs/by-project`, {
      headers: owner.headers,
    });
    expect(byProject.body.find((row) => row.projectId === projectId)).toMatchObject({ costCents: 1067 });

    // Held: a new wake on a project issue is stored cancelled (409); the list says exceeded.
    const held = await invoke(owner.headers, other.id, inside2.id);
    expect(held.status).toBe(409);
    expect(held.body.details?.errorReason).toBe("project_over_budget");
    const listed = await call<Budget[]>("GET", `/api/companies/${company.id}/budgets`, {
      headers: agent.headers,
    });
    expect(listed.body.find((budget) => budget.scope === "project")).toMatchObject({
      spentCents: 1067,
      status: "exceeded",
    });

    // Raised and resumed: the incident is resolved and the project's runs queue again.
    const incidentId = open[0]?.id ?? "";
    const tooLow = await call("POST", `/api/companies/${company.id}/budget-incidents/${incidentId}/resolve`, {
      headers: owner.headers,
      body: { action: "raise_budget_and_resume", amountCents: 1060 },
    });
    expect(tooLow.status).toBe(422);
    expect((await incidents(company.id, owner.headers, "open"))[0]?.id).toBe(incidentId);
    const resolved = await call<Incident>(
      "POST",
      `/api/companies/${company.id}/budget-incidents/${incidentId}/resolve`,
      {
        headers: owner.headers,
        body: { action: "raise_budget_and_resume", amountCents: 5000 },
      },
    );
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({
      status: "resolved",
      resolution: "raised",
      resolvedByUserId: owner.userId,
    });
    expect(await incidents(company.id, owner.headers, "open")).toEqual([]);
    const again = await invoke(owner.headers, other.id, inside2.id);
    expect(again.status).toBe(202);
    expect(again.body.status).toBe("queued");
    const repeat = await call("POST", `/api/companies/${company.id}/budget-incidents/${incidentId}/resolve`, {
      headers: owner.headers,
      body: { action: "raise_budget_and_resume", amountCents: 6000 },
    });
    expect(repeat.status).toBe(409);
  });

  it("a lifetime company budget counts every month; the claim refuses a run it would exceed; PUT above the spend frees it", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id, { adapterConfig: { command: "sleep" } });
    const lastYear = new Date(Date.now() - 400 * 86_400_000).toISOString();
    await spend(company.id, owner.headers, { agentId: agent.id, costCents: 700, occurredAt: lastYear });
    const queued = await invoke(owner.headers, agent.id);
    expect(queued.body.status).toBe("queued");

    // Set at or below what was ever spent: the hard incident opens at once and the queued run is cancelled.
    const set = await putBudget(company.id, owner.headers, {
      scope: "company",
      window: "lifetime",
      amountCents: 600,
    });
    expect(set.body).toMatchObject({
      scope: "company",
      scopeId: company.id,
      window: "lifetime",
      spentCents: 700,
      status: "exceeded",
      windowStart: null,
    });
    expect((await incidents(company.id, owner.headers, "open"))[0]).toMatchObject({
      scope: "company",
      threshold: "hard",
      costEventId: null,
    });
    expect(await runRow(queued.body.id)).toEqual({
      status: "cancelled",
      error_reason: "company_over_budget",
    });
    expect((await invoke(owner.headers, agent.id)).status).toBe(409);

    // Raised: the incident closes (raised) and a run carries the remainder as its cap.
    const raised = await putBudget(company.id, owner.headers, {
      scope: "company",
      window: "lifetime",
      amountCents: 1000,
    });
    expect(raised.body).toMatchObject({ spentCents: 700, status: "ok" });
    expect(await incidents(company.id, owner.headers, "open")).toEqual([]);
    const run = await invoke(owner.headers, agent.id);
    expect(run.status).toBe(202);
    const link = await runnerFor(owner, company.id);
    expect((await claimOne(link)).budgetCents).toBe(300);

    // A run queued, then the budget spent by another path before a runner takes it: refused at claim.
    await env.DB.prepare("UPDATE heartbeat_runs SET status = 'cancelled' WHERE company_id = ?")
      .bind(company.id)
      .run();
    const late = await invoke(owner.headers, agent.id);
    await env.DB.prepare(
      `INSERT INTO cost_events (id, company_id, agent_id, provider, billing_type, input_tokens, cached_input_tokens,
         output_tokens, cost_cents, occurred_at, created_at) VALUES (?, ?, ?, 'openai', 'unknown', 0, 0, 0, 400, ?, ?)`,
    )
      .bind(crypto.randomUUID(), company.id, agent.id, Date.now(), Date.now())
      .run();
    link.send({ type: "claim", slots: 1 });
    await eventually(async () => (await runRow(late.body.id))?.status === "cancelled");
    expect(await runRow(late.body.id)).toEqual({ status: "cancelled", error_reason: "company_over_budget" });

    // Removed (0): nothing holds, the list no longer shows it.
    expect(
      (await putBudget(company.id, owner.headers, { scope: "company", window: "lifetime", amountCents: 0 }))
        .status,
    ).toBe(200);
    const listed = await call<Budget[]>("GET", `/api/companies/${company.id}/budgets`, {
      headers: owner.headers,
    });
    expect(listed.body).toEqual([]);
  });

  it("an agent's lifetime budget holds only that agent; PATCHing an agent's monthly budget up closes its incident", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id, { budgetMonthlyCents: 100 });
    const other = await seedAgent(company.id);
    await putBudget(company.id, owner.headers, {
      scope: "agent",
      scopeId: agent.id,
      window: "lifetime",
      amountCents: 5000,
    });
    await spend(company.id, owner.headers, { agentId: agent.id, costCents: 100 });
    // The monthly budget (on the agent's row) is reached: paused, and its hard incident is listed.
    expect(await incidents(company.id, owner.headers, "open")).toMatchObject([
      { scope: "agent", threshold: "hard" },
    ]);
    expect((await invoke(owner.headers, other.id)).status).toBe(202);
    const patched = await call("PATCH", `/api/agents/${agent.id}`, {
      headers: owner.headers,
      body: { budgetMonthlyCents: 1000 },
    });
    expect(patched.status).toBe(200);
    expect(await incidents(company.id, owner.headers, "open")).toEqual([]);
    // Raising it through the incident instead would also have resumed it: here it stays paused.
    const row = await env.DB.prepare("SELECT status FROM agents WHERE id = ?")
      .bind(agent.id)
      .first<{ status: string }>();
    expect(row?.status).toBe("paused");
  });

  it("raise_budget_and_resume on an agent's monthly incident resumes the agent paused for its budget", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id, { budgetMonthlyCents: 100 });
    await spend(company.id, owner.headers, { agentId: agent.id, costCents: 120 });
    const [incident] = await incidents(company.id, owner.headers, "open");
    expect(incident).toMatchObject({ scope: "agent", scopeId: agent.id, threshold: "hard", spentCents: 120 });
    const res = await call("POST", `/api/companies/${company.id}/budget-incidents/${incident?.id}/resolve`, {
      headers: owner.headers,
      body: { action: "raise_budget_and_resume", amountCents: 500 },
    });
    expect(res.status).toBe(200);
    const row = await env.DB.prepare(
      "SELECT status, pause_reason, budget_monthly_cents FROM agents WHERE id = ?",
    )
      .bind(agent.id)
      .first();
    expect(row).toEqual({ status: "idle", pause_reason: null, budget_monthly_cents: 500 });
    expect((await invoke(owner.headers, agent.id)).status).toBe(202);
  });
});
