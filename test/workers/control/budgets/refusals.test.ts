// Budgets (issue 32), continued: what the budget routes refuse (and that a refusal changes nothing),
// how a monthly incident ends with its month, what deleting a project does to its budget, and spend
// by model and by provider.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { closeEndedWindows } from "../../../../workers/control/budgets";
import { database } from "../../../../workers/db/client";
import { call } from "../../helpers";
import { addMembership, boardUser, seedAgent, seedCompany, seedIssue } from "../helpers";
import {
  type Budget,
  incidents,
  inProject,
  invoke,
  type Json,
  project,
  putBudget,
  settleRuns,
  spend,
} from "./fixtures";

beforeEach(settleRuns);

describe("budgets: refusals, windows, read-outs", () => {
  it("a monthly incident holds only in its month; the hourly sweep closes last month's", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id);
    const projectId = await project(company.id, owner.headers);
    const issue = await seedIssue(company, { assigneeAgentId: agent.id });
    await inProject(issue.id, projectId);
    const now = Date.now();
    const date = new Date(now);
    const lastMonth = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() - 1, 1);
    const id = crypto.randomUUID();
    await env.DB.prepare(
      `INSERT INTO budget_incidents (id, company_id, scope_type, scope_id, "window", window_start, threshold,
         amount_cents, spent_cents, cost_event_id, status, created_at)
       VALUES (?, ?, 'project', ?, 'month', ?, 'hard', 100, 100, NULL, 'open', ?)`,
    )
      .bind(id, company.id, projectId, lastMonth, lastMonth)
      .run();
    const woken = await invoke(owner.headers, agent.id, issue.id);
    expect(woken.status).toBe(202);
    await closeEndedWindows(database(env.DB), now).run();
    expect(await incidents(company.id, owner.headers)).toMatchObject([
      { id, status: "resolved", resolution: "window_ended" },
    ]);
  });

  it("refuses what it must and changes nothing: members, other tenants' ids, a missing scopeId, dismissing a hard incident", async () => {
    const owner = await boardUser();
    const member = await boardUser();
    const company = await seedCompany(owner);
    await addMembership(company.id, member.userId, "member");
    const stranger = await boardUser();
    const otherCompany = await seedCompany(stranger);
    const foreignProject = await project(otherCompany.id, stranger.headers);
    const agent = await seedAgent(company.id, { budgetMonthlyCents: 50 });

    expect(
      (await putBudget(company.id, member.headers, { scope: "company", window: "month", amountCents: 10 }))
        .status,
    ).toBe(403);
    expect(
      (
        await putBudget(company.id, owner.headers, {
          scope: "project",
          scopeId: foreignProject,
          window: "month",
          amountCents: 10,
        })
      ).status,
    ).toBe(404);
    expect(
      (await putBudget(company.id, owner.headers, { scope: "project", window: "month", amountCents: 10 }))
        .status,
    ).toBe(422);
    expect(
      (
        await putBudget(company.id, owner.headers, {
          scope: "project",
          scopeId: "x",
          window: "weekly",
          amountCents: 10,
        })
      ).status,
    ).toBe(400);
    expect(
      (await putBudget(company.id, owner.headers, { scope: "company", window: "month", amountCents: -1 }))
        .status,
    ).toBe(400);
    expect(
      (
        await putBudget(otherCompany.id, owner.headers, {
          scope: "company",
          window: "month",
          amountCents: 10,
        })
      ).status,
    ).toBe(404);
    const policies = await env.DB.prepare(
      "SELECT count(*) AS n FROM budget_policies WHERE company_id IN (?, ?)",
    )
      .bind(company.id, otherCompany.id)
      .first<{ n: number }>();
    expect(policies?.n).toBe(0);

    await spend(company.id, owner.headers, { agentId: agent.id, costCents: 60 });
    const [hard] = await incidents(company.id, owner.headers, "open");
    const resolve = (headers: Record<string, string>, companyId: string, body: Json) =>
      call("POST", `/api/companies/${companyId}/budget-incidents/${hard?.id}/resolve`, { headers, body });
    expect((await resolve(owner.headers, company.id, { action: "dismiss" })).status).toBe(422);
    expect(
      (await resolve(member.headers, company.id, { action: "raise_budget_and_resume", amountCents: 500 }))
        .status,
    ).toBe(403);
    expect(
      (
        await resolve(stranger.headers, otherCompany.id, {
          action: "raise_budget_and_resume",
          amountCents: 500,
        })
      ).status,
    ).toBe(404);
    expect((await resolve(owner.headers, company.id, { action: "raise" })).status).toBe(400);
    expect(await incidents(company.id, owner.headers, "open")).toHaveLength(1);
    expect((await incidents(otherCompany.id, stranger.headers)).length).toBe(0);
    expect(
      (await call("GET", `/api/companies/${company.id}/budget-incidents`, { headers: stranger.headers }))
        .status,
    ).toBe(404);
  });

  it("deleting a project removes its budget and closes its incidents", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id);
    const projectId = await project(company.id, owner.headers);
    await putBudget(company.id, owner.headers, {
      scope: "project",
      scopeId: projectId,
      window: "lifetime",
      amountCents: 10,
    });
    await spend(company.id, owner.headers, { agentId: agent.id, costCents: 10, projectId });
    expect(await incidents(company.id, owner.headers, "open")).toHaveLength(1);
    expect((await call("DELETE", `/api/projects/${projectId}`, { headers: owner.headers })).status).toBe(204);
    expect(await incidents(company.id, owner.headers, "open")).toEqual([]);
    expect((await incidents(company.id, owner.headers))[0]).toMatchObject({ resolution: "removed" });
    const listed = await call<Budget[]>("GET", `/api/companies/${company.id}/budgets`, {
      headers: owner.headers,
    });
    expect(listed.body).toEqual([]);
  });

  it("spend by model and by provider", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id);
    await spend(company.id, owner.headers, {
      agentId: agent.id,
      costCents: 30,
      provider: "openai",
      model: "gpt-5-mini",
    });
    await spend(company.id, owner.headers, {
      agentId: agent.id,
      costCents: 12,
      provider: "openai",
      model: "gpt-5-mini",
    });
    await spend(company.id, owner.headers, {
      agentId: agent.id,
      costCents: 50,
      provider: "anthropic",
      model: "claude-sonnet-4-5",
    });
    await spend(company.id, owner.headers, { agentId: agent.id, costCents: 5, provider: "ollama" });
    const byModel = await call<Json[]>("GET", `/api/companies/${company.id}/costs/by-model`, {
      headers: owner.headers,
    });
    expect(byModel.body.map((row) => [row.provider, row.model, row.costCents, row.eventCount])).toEqual([
      ["anthropic", "claude-sonnet-4-5", 50, 1],
      ["openai", "gpt-5-mini", 42, 2],
      ["ollama", null, 5, 1],
    ]);
    const byProvider = await call<Json[]>("GET", `/api/companies/${company.id}/costs/by-provider`, {
      headers: agent.headers,
    });
    expect(byProvider.body.map((row) => [row.provider, row.costCents])).toEqual([
      ["anthropic", 50],
      ["openai", 42],
      ["ollama", 5],
    ]);
  });
});
