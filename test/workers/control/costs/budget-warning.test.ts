// The soft threshold: the cost event that takes an agent's or company's monthly spend across 80 % of
// its budget raises one budget.warning activity row; later events under the budget do not repeat it,
// and the hard stop (100 %) is unaffected.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { activityOf, boardUser, seedAgent, seedCompany } from "../helpers";

const cost = (agentId: string, costCents: number) => ({
  agentId,
  provider: "anthropic",
  costCents,
  occurredAt: new Date().toISOString(),
});

const warnings = async (entityId: string) =>
  (await activityOf(entityId)).filter((row) => row.action === "budget.warning");

async function warningDetails(entityId: string) {
  const row = await env.DB.prepare(
    "SELECT details FROM activity_log WHERE entity_id = ? AND action = 'budget.warning'",
  )
    .bind(entityId)
    .first<{ details: string }>();
  return row ? (JSON.parse(row.details) as Record<string, unknown>) : null;
}

describe("budget soft threshold", () => {
  it("warns once when an agent's spend crosses 80 % of its budget", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id, { budgetMonthlyCents: 1000 });
    const path = `/api/companies/${company.id}/cost-events`;

    expect((await call("POST", path, { headers: agent.headers, body: cost(agent.id, 700) })).status).toBe(
      201,
    );
    expect(await warnings(agent.id)).toHaveLength(0);

    expect((await call("POST", path, { headers: agent.headers, body: cost(agent.id, 150) })).status).toBe(
      201,
    );
    expect(await warnings(agent.id)).toHaveLength(1);
    expect(await warningDetails(agent.id)).toMatchObject({
      budget: "agent",
      window: "month",
      thresholdPercent: 80,
      spentCents: 850,
      amountCents: 1000,
    });

    expect((await call("POST", path, { headers: agent.headers, body: cost(agent.id, 50) })).status).toBe(201);
    expect(await warnings(agent.id)).toHaveLength(1);
    const agentRow = await env.DB.prepare("SELECT status FROM agents WHERE id = ?")
      .bind(agent.id)
      .first<{ status: string }>();
    expect(agentRow?.status).toBe("idle");
  });

  it("warns the company when its spend crosses 80 % of the company budget", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    await env.DB.prepare("UPDATE companies SET budget_monthly_cents = 2000 WHERE id = ?")
      .bind(company.id)
      .run();
    const first = await seedAgent(company.id);
    const second = await seedAgent(company.id);
    const path = `/api/companies/${company.id}/cost-events`;

    expect((await call("POST", path, { headers: first.headers, body: cost(first.id, 1000) })).status).toBe(
      201,
    );
    expect(await warnings(company.id)).toHaveLength(0);
    expect((await call("POST", path, { headers: second.headers, body: cost(second.id, 700) })).status).toBe(
      201,
    );
    expect(await warnings(company.id)).toHaveLength(1);
    expect(await warningDetails(company.id)).toMatchObject({
      budget: "company",
      spentCents: 1700,
      amountCents: 2000,
    });
    // Agents without a budget of their own are not warned.
    expect(await warnings(second.id)).toHaveLength(0);
  });
});
