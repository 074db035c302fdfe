// Budgets stop runs, not only wakes: a company whose monthly budget is spent starts nothing more
// (its wakes are stored cancelled, a run queued earlier is refused when a runner would start it), an
// agent over its budget likewise at start time, and a running run is stopped (cancelled,
// budget_exceeded) when a cost event brings its agent's or company's spend to the cap.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import type { Link } from "../../fake-bridge";
import { call } from "../../helpers";
import { eventually } from "../../patience";
import { type BoardUser, boardUser, seedAgent, seedCompany } from "../helpers";
import { claimOne, runnerFor } from "../runner-link";

type Json = Record<string, unknown>;

beforeEach(async () => {
  await env.DB.prepare(
    "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
  ).run();
});

const runRow = (id: string) =>
  env.DB.prepare("SELECT status, error_reason FROM heartbeat_runs WHERE id = ?")
    .bind(id)
    .first<{ status: string; error_reason: string | null }>();

const invoke = (headers: Record<string, string>, agentId: string) =>
  call<Json & { details?: { errorReason: string; run: Json } }>(
    "POST",
    `/api/agents/${agentId}/heartbeat/invoke`,
    { headers },
  );

async function reportCost(
  companyId: string,
  headers: Record<string, string>,
  body: { agentId: string; costCents: number; heartbeatRunId?: string },
) {
  const res = await call("POST", `/api/companies/${companyId}/cost-events`, {
    headers,
    body: { provider: "anthropic", occurredAt: new Date().toISOString(), ...body },
  });
  expect(res.status).toBe(201);
}

async function setCompanyBudget(owner: BoardUser, companyId: string, cents: number) {
  const res = await call("PATCH", `/api/companies/${companyId}`, {
    headers: owner.headers,
    body: { budgetMonthlyCents: cents },
  });
  expect(res.status).toBe(200);
}

/** The runner asks for work; the run is settled (refused) without ever being handed to it. */
async function claimRefused(link: Link, runId: string, reason: string) {
  link.send({ type: "claim", slots: 1 });
  await eventually(async () => (await runRow(runId))?.status === "cancelled");
  expect(await runRow(runId)).toEqual({ status: "cancelled", error_reason: reason });
  expect(link.frames.filter((frame) => frame.type === "run")).toEqual([]);
}

/** The runner was told to stop the run; it reports the process gone; the run ends budget_exceeded. */
async function stoppedOverBudget(link: Link, runId: string, headers: Record<string, string>) {
  await link.next((frame) => frame.type === "cancel" && frame.runId === runId);
  link.send({ type: "finish", runId, exitCode: null, timedOut: false, logFrames: 0 });
  await eventually(async () => (await runRow(runId))?.status === "cancelled");
  const shown = await call<Json>("GET", `/api/heartbeat-runs/${runId}`, { headers });
  expect(shown.status).toBe(200);
  expect(shown.body).toMatchObject({ status: "cancelled", errorReason: "budget_exceeded" });
}

describe("company budget", () => {
  it("a run queued before the company's budget was spent is refused when a runner would start it; the next wake is refused at once", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id, { adapterConfig: { command: "sleep" } });
    const queued = await invoke(owner.headers, agent.id);
    expect(queued.body.status).toBe("queued");
    // 18¢ spent, then a 10¢ budget: nothing was running when the spend arrived.
    await reportCost(company.id, owner.headers, { agentId: agent.id, costCents: 18 });
    await setCompanyBudget(owner, company.id, 10);
    expect((await runRow(String(queued.body.id)))?.status).toBe("queued");

    await claimRefused(await runnerFor(owner, company.id), String(queued.body.id), "company_over_budget");

    const next = await invoke(owner.headers, agent.id);
    expect(next.status).toBe(409);
    expect(next.body.details).toMatchObject({
      errorReason: "company_over_budget",
      run: { status: "cancelled", errorReason: "company_over_budget" },
    });
  });

  it("the cost event that spends the company's budget cancels its queued runs", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    await setCompanyBudget(owner, company.id, 10);
    const spender = await seedAgent(company.id);
    const waiting = await seedAgent(company.id);
    const queued = await invoke(owner.headers, waiting.id);
    expect(queued.body.status).toBe("queued");
    await reportCost(company.id, owner.headers, { agentId: spender.id, costCents: 18 });
    expect(await runRow(String(queued.body.id))).toEqual({
      status: "cancelled",
      error_reason: "company_over_budget",
    });
  });

  it("a running run is stopped with budget_exceeded when another run's cost spends the company's budget", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    await setCompanyBudget(owner, company.id, 100);
    const busy = await seedAgent(company.id, { adapterConfig: { command: "sleep" } });
    const other = await seedAgent(company.id);
    await invoke(owner.headers, busy.id);
    const link = await runnerFor(owner, company.id);
    const run = await claimOne(link);
    await reportCost(company.id, owner.headers, { agentId: other.id, costCents: 60 });
    expect((await runRow(run.runId))?.status).toBe("running");
    await reportCost(company.id, owner.headers, { agentId: other.id, costCents: 40 });
    await stoppedOverBudget(link, run.runId, owner.headers);
  });
});

describe("agent budget", () => {
  it("an agent whose budget is lowered below its spend after a wake is refused when the run would start", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id, { adapterConfig: { command: "sleep" } });
    const queued = await invoke(owner.headers, agent.id);
    await reportCost(company.id, owner.headers, { agentId: agent.id, costCents: 50 });
    const lowered = await call("PATCH", `/api/agents/${agent.id}`, {
      headers: owner.headers,
      body: { budgetMonthlyCents: 40 },
    });
    expect(lowered.status).toBe(200);
    await claimRefused(await runnerFor(owner, company.id), String(queued.body.id), "agent_over_budget");
  });

  it("a running run that reports a cost reaching its agent's budget is stopped with budget_exceeded", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id, {
      budgetMonthlyCents: 50,
      adapterConfig: { command: "sleep" },
    });
    await invoke(owner.headers, agent.id);
    const link = await runnerFor(owner, company.id);
    const run = await claimOne(link);
    // The run's own key, as the agent's process would use it mid-run.
    const runKey = { authorization: `Bearer ${run.env.PLATFORM_API_KEY}` };
    await reportCost(company.id, runKey, { agentId: agent.id, costCents: 50, heartbeatRunId: run.runId });
    await stoppedOverBudget(link, run.runId, owner.headers);
  });
});

describe("the run's own cap", () => {
  it("a run carries what is left of its agent's and company's budgets; a CLI that stops itself there ends budget_exceeded", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    await setCompanyBudget(owner, company.id, 500);
    const agent = await seedAgent(company.id, {
      budgetMonthlyCents: 200,
      adapterConfig: { command: "sleep" },
    });
    const other = await seedAgent(company.id, { adapterConfig: { command: "sleep" } });
    await reportCost(company.id, owner.headers, { agentId: agent.id, costCents: 120 });
    await reportCost(company.id, owner.headers, { agentId: other.id, costCents: 350 });
    await invoke(owner.headers, agent.id);
    const link = await runnerFor(owner, company.id);
    // Agent: 200 - 120 = 80 left; company: 500 - 470 = 30 left: the smaller.
    const run = await claimOne(link);
    expect(run.budgetCents).toBe(30);
    link.send({
      type: "finish",
      runId: run.runId,
      exitCode: 1,
      timedOut: false,
      logFrames: 0,
      error: "budget_exceeded: claude stopped at the run's budget (Reached maximum budget ($0.3))",
      costCents: 33,
    });
    await eventually(async () => (await runRow(run.runId))?.status === "cancelled");
    expect(await runRow(run.runId)).toEqual({ status: "cancelled", error_reason: "budget_exceeded" });

    // Its 33 cents spent the company's budget; without one, a run carries no cap.
    await setCompanyBudget(owner, company.id, 0);
    expect((await invoke(owner.headers, other.id)).status).toBe(202);
    const free = await claimOne(link);
    expect(free.budgetCents).toBeUndefined();
  });
});
