// The costs page's budgets (issue 32): every budget with its spend and status, the open incidents with
// Raise and resume (owners), a Set a budget form whose refusals sit next to their fields, and spend by
// provider and model; a member sees the same figures and no forms.
import { describe, expect, it } from "vitest";
import { addMembership, seedAgent, seedCompany } from "../control/helpers";
import { asKey, asSession, call, createUser, generateKey } from "../helpers";
import { browse, fieldError, submit, textOf } from "./helpers";

type Json = Record<string, unknown>;

async function ownerAndCompany() {
  const session = await createUser("OWNER");
  const key = await generateKey(session);
  const owner = { userId: session.userId, key, headers: asKey(key) };
  const company = await seedCompany(owner);
  const project = await call<{ id: string }>("POST", `/api/companies/${company.id}/projects`, {
    headers: owner.headers,
    body: { name: "Ledger" },
  });
  return { session, owner, company, projectId: project.body.id };
}

describe("budgets on the costs page", () => {
  it("an owner sets a project budget, sees the incident when it is spent, and raises it from the page", async () => {
    const { session, owner, company, projectId } = await ownerAndCompany();
    const agent = await seedAgent(company.id, { name: "Penny" });
    const costs = `/companies/${company.id}/costs`;

    const saved = await submit(session, `/companies/${company.id}/budgets`, {
      target: `project:${projectId}`,
      window: "lifetime",
      amountCents: "500",
    });
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe(costs);

    const refused = await submit(session, `/companies/${company.id}/budgets`, {
      target: `project:${projectId}`,
      window: "lifetime",
      amountCents: "-5",
    });
    expect(refused.status).toBe(400);
    expect(fieldError(refused.html, "amountCents")).toBeTruthy();

    const report = await call("POST", `/api/companies/${company.id}/cost-events`, {
      headers: owner.headers,
      body: {
        agentId: agent.id,
        projectId,
        provider: "openai",
        model: "gpt-5-mini",
        costCents: 600,
        occurredAt: new Date().toISOString(),
      },
    });
    expect(report.status).toBe(201);

    const page = await browse(session, costs);
    const text = textOf(page.html);
    expect(text).toContain("Project: Ledger");
    expect(text).toMatch(
      /Budget incidents[\s\S]*Project: Ledger \(lifetime\)[\s\S]*exceeded[\s\S]*\$6\.00[\s\S]*\$5\.00/,
    );
    expect(text).toMatch(/By provider and model[\s\S]*openai[\s\S]*gpt-5-mini[\s\S]*\$6\.00/);
    expect(page.html).toContain("Raise and resume");

    const incidents = await call<Json[]>("GET", `/api/companies/${company.id}/budget-incidents?status=open`, {
      headers: owner.headers,
    });
    const incidentId = String(incidents.body[0]?.id);
    const resolve = `/companies/${company.id}/budget-incidents/${incidentId}/resolve`;
    const tooLow = await submit(session, resolve, { action: "raise_budget_and_resume", amountCents: "600" });
    expect(tooLow.status).toBe(422);
    expect(fieldError(tooLow.html, "amountCents")).toContain("above the spend");

    const raised = await submit(session, resolve, { action: "raise_budget_and_resume", amountCents: "2000" });
    expect(raised.status).toBe(303);
    const after = textOf((await browse(session, costs)).html);
    expect(after).toContain("No open incidents.");
    expect(after).toMatch(/Project: Ledger[\s\S]*Lifetime[\s\S]*\$6\.00[\s\S]*\$20\.00[\s\S]*ok/);
  });

  it("a member sees budgets and incidents but no form to change them", async () => {
    const { owner, company } = await ownerAndCompany();
    const memberSession = await createUser("OWNER");
    await addMembership(company.id, memberSession.userId, "member");
    const agent = await seedAgent(company.id, { budgetMonthlyCents: 100 });
    await call("POST", `/api/companies/${company.id}/cost-events`, {
      headers: owner.headers,
      body: { agentId: agent.id, provider: "openai", costCents: 150, occurredAt: new Date().toISOString() },
    });
    const page = await browse(memberSession, `/companies/${company.id}/costs`);
    expect(page.status).toBe(200);
    expect(textOf(page.html)).toMatch(/Budget incidents[\s\S]*Agent:[\s\S]*exceeded/);
    expect(page.html).not.toContain("Raise and resume");
    expect(page.html).not.toContain("Save budget");
    const denied = await submit(memberSession, `/companies/${company.id}/budgets`, {
      target: `company:${company.id}`,
      window: "month",
      amountCents: "1",
    });
    expect(denied.status).toBe(403);
    const company2 = await call<Json>("GET", `/api/companies/${company.id}`, {
      headers: asSession(memberSession),
    });
    expect(company2.body.budgetMonthlyCents).toBe(0);
  });
});
