// The costs page (charts and tables of the month's spend) and the routines page (triggers with their
// next run, recent runs, Run now, the New routine form) in workerd, through the dashboard URLs.
import { beforeAll, describe, expect, it } from "vitest";
import { asSession, call, count, createUser, type Session } from "../helpers";
import { browse, fieldError, formError, submit, textOf } from "./helpers";

type Json = Record<string, unknown>;

let owner: Session;
let stranger: Session;
let companyId: string;
let agent: { id: string; name: string };
let project: { id: string; name: string };

beforeAll(async () => {
  owner = await createUser("OWNER");
  stranger = await createUser("OWNER");
  const headers = asSession(owner);
  const company = await call<{ id: string }>("POST", "/api/companies", {
    headers,
    body: {
      name: `Money Co ${crypto.randomUUID().slice(0, 6)}`,
      requireBoardApprovalForNewAgents: false,
      budgetMonthlyCents: 10_000,
    },
  });
  companyId = company.body.id;
  const hired = await call<{ agent: { id: string; name: string } }>(
    "POST",
    `/api/companies/${companyId}/agent-hires`,
    {
      headers,
      body: { name: "Penny", role: "cfo", adapterType: "coder_local", adapterConfig: { command: "node" } },
    },
  );
  agent = hired.body.agent;
  const created = await call<{ id: string; name: string }>("POST", `/api/companies/${companyId}/projects`, {
    headers,
    body: { name: "Ledger" },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  project = created.body;
});

async function recordCost(body: Json): Promise<void> {
  const res = await call("POST", `/api/companies/${companyId}/cost-events`, {
    headers: asSession(owner),
    body: { agentId: agent.id, provider: "test", occurredAt: new Date().toISOString(), ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

const flashOf = (headers: Headers) => decodeURIComponent(headers.get("set-cookie") ?? "");

/** The `<svg>` with this accessible name. */
function chart(html: string, label: string): string {
  return (
    html.match(new RegExp(`<svg class="chart" role="img" aria-label="${label}"[\\s\\S]*?</svg>`))?.[0] ?? ""
  );
}
const barWidths = (svg: string) =>
  [...svg.matchAll(/<rect class="bar"[^>]* width="(\d+)"/g)].map((m) => Number(m[1]));

describe("costs page", () => {
  it("shows the month's spend against the budget, by agent and by project, as charts and tables", async () => {
    await recordCost({ costCents: 1234, inputTokens: 1000, outputTokens: 200, projectId: project.id });
    await recordCost({ costCents: 617 });
    const page = await browse(owner, `/companies/${companyId}/costs`);
    expect(page.status).toBe(200);
    const text = textOf(page.html);
    expect(text).toContain("Spent $18.51 of a $100.00 budget (18.51%)");

    const summary = chart(page.html, "Spend against the monthly budget");
    expect(summary).toContain("<title>Spend against the monthly budget</title>");
    const [spent, budget] = barWidths(summary);
    expect(budget).toBe(330);
    expect(spent).toBe(Math.round((1851 / 10_000) * 330));

    const byAgent = chart(page.html, "Spend by agent");
    expect(barWidths(byAgent)).toEqual([330]);
    expect(textOf(byAgent)).toBe("Spend by agent Penny $18.51");
    const agentTable = page.html.match(/<h2 id="costs-agents">[\s\S]*?<\/table>/)?.[0] ?? "";
    expect(textOf(agentTable)).toContain("Penny idle $18.51 1,000 0 200 2");

    const byProject = chart(page.html, "Spend by project");
    expect(barWidths(byProject)).toEqual([330, 165]);
    const projectTable = page.html.match(/<h2 id="costs-projects">[\s\S]*?<\/table>/)?.[0] ?? "";
    expect(textOf(projectTable)).toContain("Ledger $12.34 1,000 0 200 1");
    expect(textOf(projectTable)).toContain("No project $6.17 0 0 0 1");
    expect(page.html).not.toMatch(/style=/);
  });

  it("answers another user's company with the API's 404", async () => {
    const page = await browse(stranger, `/companies/${companyId}/costs`);
    expect(page.status).toBe(404);
    expect(textOf(page.html)).not.toContain("Penny");
  });
});

interface Routine {
  id: string;
  title: string;
  triggers: Array<{
    kind: string;
    cronExpression: string | null;
    timezone: string | null;
    nextRunAt: string | null;
  }>;
}

const routinesOf = async () =>
  (await call<Routine[]>("GET", `/api/companies/${companyId}/routines`, { headers: asSession(owner) })).body;
const routine = async (id: string) =>
  (await call<Routine>("GET", `/api/routines/${id}`, { headers: asSession(owner) })).body;

/** The API's own message for a schedule trigger with this cron and zone (on a throwaway routine). */
async function apiScheduleError(cronExpression: string, timezone: string): Promise<string> {
  const scratch = await call<{ id: string }>("POST", `/api/companies/${companyId}/routines`, {
    headers: asSession(owner),
    body: { title: "scratch", assigneeAgentId: agent.id, projectId: project.id, status: "archived" },
  });
  const res = await call<{ error: string }>("POST", `/api/routines/${scratch.body.id}/triggers`, {
    headers: asSession(owner),
    body: { kind: "schedule", cronExpression, timezone },
  });
  expect(res.status).toBe(422);
  return res.body.error;
}

describe("routines page", () => {
  it("creates a routine with a schedule; the page shows its cron, zone and next run", async () => {
    const res = await submit(owner, `/companies/${companyId}/routines`, {
      title: "Close the books",
      assigneeAgentId: agent.id,
      projectId: project.id,
      cronExpression: "0 9 * * 1-5",
      timezone: "Europe/Berlin",
    });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/companies/${companyId}/routines`);
    expect(flashOf(res.headers)).toContain("Routine Close the books created");
    const created = (await routinesOf()).find((r) => r.title === "Close the books");
    const detail = await routine(created?.id ?? "");
    expect(detail.triggers).toEqual([
      expect.objectContaining({ kind: "schedule", cronExpression: "0 9 * * 1-5", timezone: "Europe/Berlin" }),
    ]);
    const nextRunAt = detail.triggers[0]?.nextRunAt ?? "";
    expect(nextRunAt).not.toBe("");

    const page = await browse(owner, `/companies/${companyId}/routines`);
    expect(page.status).toBe(200);
    const article = page.html.match(/<article[^>]*>[\s\S]*?Close the books[\s\S]*?<\/article>/)?.[0] ?? "";
    const shown = `${nextRunAt.replace("T", " ").slice(0, 16)} UTC`;
    expect(textOf(article)).toContain(`schedule 0 9 * * 1-5 (Europe/Berlin) ${shown}`);
    expect(textOf(article)).toContain("For Penny in Ledger");
    expect(textOf(article)).toContain("No runs yet.");
  });

  it("refuses a bad cron or zone with the API's message next to the field and creates no routine", async () => {
    const before = await count("routines");
    const badCron = await submit(owner, `/companies/${companyId}/routines`, {
      title: "Never",
      assigneeAgentId: agent.id,
      projectId: project.id,
      cronExpression: "61 * * * *",
      timezone: "UTC",
    });
    expect(badCron.status).toBe(422);
    const fewFields = await submit(owner, `/companies/${companyId}/routines`, {
      title: "Never",
      assigneeAgentId: agent.id,
      projectId: project.id,
      cronExpression: "* * *",
      timezone: "UTC",
    });
    const badZone = await submit(owner, `/companies/${companyId}/routines`, {
      title: "Never",
      assigneeAgentId: agent.id,
      projectId: project.id,
      cronExpression: "0 9 * * *",
      timezone: "Mars/Olympus",
    });
    expect(badZone.status).toBe(422);
    expect(await count("routines")).toBe(before);

    const api = {
      cron: await apiScheduleError("61 * * * *", "UTC"),
      fields: await apiScheduleError("* * *", "UTC"),
      zone: await apiScheduleError("0 9 * * *", "Mars/Olympus"),
    };
    expect(`cronExpression: ${fieldError(badCron.html, "cronExpression")}`).toBe(api.cron);
    expect(`cronExpression: ${fieldError(fewFields.html, "cronExpression")}`).toBe(api.fields);
    expect(`timezone: ${fieldError(badZone.html, "timezone")}`).toBe(api.zone);
    expect(badZone.html).toContain('value="Mars/Olympus"');
  });

  it("shows the API's message next to project when none is chosen, and creates nothing", async () => {
    const before = await count("routines");
    const res = await submit(owner, `/companies/${companyId}/routines`, {
      title: "Homeless",
      assigneeAgentId: agent.id,
      projectId: "",
      cronExpression: "",
      timezone: "UTC",
    });
    expect(res.status).toBe(400);
    expect(fieldError(res.html, "projectId")).toMatch(/\S/);
    expect(formError(res.html)).toBeNull();
    expect(await count("routines")).toBe(before);
  });

  it("runs a routine now: a flash with the outcome and the run in its history", async () => {
    const created = await call<{ id: string }>("POST", `/api/companies/${companyId}/routines`, {
      headers: asSession(owner),
      body: { title: "Count the coins", assigneeAgentId: agent.id, projectId: project.id },
    });
    const res = await submit(owner, `/routines/${created.body.id}/run`);
    expect(res.status).toBe(303);
    expect(flashOf(res.headers)).toContain("Count the coins ran: issue created");
    const runs = await call<Json[]>("GET", `/api/routines/${created.body.id}/runs`, {
      headers: asSession(owner),
    });
    expect(runs.body).toHaveLength(1);
    const page = await browse(owner, `/companies/${companyId}/routines`);
    const article =
      page.html.match(/<article[^>]*>(?:(?!<\/article>)[\s\S])*Count the coins[\s\S]*?<\/article>/)?.[0] ??
      "";
    expect(textOf(article)).toMatch(/manual issue created Open the issue/);
    expect(textOf(article)).toContain("No triggers");

    // An archived routine cannot run: the API's 409 shows as the page's alert.
    await call("PATCH", `/api/routines/${created.body.id}`, {
      headers: asSession(owner),
      body: { status: "archived" },
    });
    const refused = await submit(owner, `/routines/${created.body.id}/run`);
    expect(refused.status).toBe(409);
    expect(textOf(refused.html)).toMatch(/Count the coins: .*archived/i);
    const after = await call<Json[]>("GET", `/api/routines/${created.body.id}/runs`, {
      headers: asSession(owner),
    });
    expect(after.body).toHaveLength(1);
  });

  it("does not run or show another user's routines", async () => {
    const created = await call<{ id: string }>("POST", `/api/companies/${companyId}/routines`, {
      headers: asSession(owner),
      body: { title: "Secret chore", assigneeAgentId: agent.id, projectId: project.id },
    });
    expect((await browse(stranger, `/companies/${companyId}/routines`)).status).toBe(404);
    const res = await submit(stranger, `/routines/${created.body.id}/run`);
    expect(res.status).toBe(404);
    const runs = await call<Json[]>("GET", `/api/routines/${created.body.id}/runs`, {
      headers: asSession(owner),
    });
    expect(runs.body).toEqual([]);
  });
});
