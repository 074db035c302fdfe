// The activity log page (filters by who, entity type, action and date; paging) and the company
// settings page (name, description, budget, approval rule) in workerd, through the dashboard URLs.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { asSession, call, createUser, type Session } from "../helpers";
import { browse, fieldError, submit, textOf } from "./helpers";

interface Company {
  name: string;
  description: string | null;
  budgetMonthlyCents: number;
  requireBoardApprovalForNewAgents: boolean;
}

let owner: Session;
let stranger: Session;
let companyId: string;
let agentId: string;

const company = async () =>
  (await call<Company>("GET", `/api/companies/${companyId}`, { headers: asSession(owner) })).body;
/** The rows of the log table, as text. */
const logRows = (html: string) =>
  [...(html.match(/<h2 id="activity-log">[\s\S]*?<\/tbody>/)?.[0] ?? "").matchAll(/<tr>([\s\S]*?)<\/tr>/g)]
    .slice(1)
    .map((row) => textOf(row[1] ?? ""));

beforeAll(async () => {
  owner = await createUser("OWNER");
  stranger = await createUser("OWNER");
  const headers = asSession(owner);
  const created = await call<{ id: string }>("POST", "/api/companies", {
    headers,
    body: { name: `Log Co ${crypto.randomUUID().slice(0, 6)}`, requireBoardApprovalForNewAgents: false },
  });
  companyId = created.body.id;
  const hired = await call<{ agent: { id: string } }>("POST", `/api/companies/${companyId}/agent-hires`, {
    headers,
    body: { name: "Scribe", role: "engineer", adapterType: "process", adapterConfig: { command: "node" } },
  });
  agentId = hired.body.agent.id;
  for (let n = 0; n < 55; n++)
    await env.DB.prepare(
      "INSERT INTO activity_log (id, company_id, actor_type, actor_id, action, entity_type, entity_id, details, created_at) VALUES (?, ?, 'agent', ?, 'issue.commented', 'issue', 'i1', '{}', ?)",
    )
      .bind(
        `seeded-${String(n).padStart(3, "0")}`,
        companyId,
        agentId,
        Date.parse("2026-01-10T12:00:00Z") + n,
      )
      .run();
});

describe("activity page", () => {
  it("pages through the log: 50 entries, then the older ones after the last one shown", async () => {
    const first = await browse(owner, `/companies/${companyId}/activity?action=issue.commented`);
    expect(first.status).toBe(200);
    expect(logRows(first.html)).toHaveLength(50);
    const next = first.html.match(/<a href="([^"]+)">Older entries<\/a>/)?.[1]?.replace(/&amp;/g, "&");
    expect(next).toContain("before=seeded-005");
    const second = await browse(owner, next ?? "");
    expect(logRows(second.html)).toHaveLength(5);
    expect(second.html).not.toContain("Older entries");
  });

  it("filters by who, entity type, action and date", async () => {
    const byBoard = await browse(owner, `/companies/${companyId}/activity?actor=user&entityType=company`);
    expect(logRows(byBoard.html)).toEqual([expect.stringMatching(/You company\.created company Log Co/)]);
    const byAgent = await browse(
      owner,
      `/companies/${companyId}/activity?actor=agent:${agentId}&since=2026-01-10&until=2026-01-11`,
    );
    expect(logRows(byAgent.html)).toHaveLength(50);
    expect(logRows(byAgent.html)[0]).toContain("Scribe issue.commented issue");
    const none = await browse(owner, `/companies/${companyId}/activity?since=2026-01-11&action=issue.`);
    expect(textOf(none.html)).toContain("Nothing matches these filters.");
    expect(none.html).toContain('value="2026-01-11"');
  });

  it("shows a bad date and a bad action next to their fields", async () => {
    const bad = await browse(owner, `/companies/${companyId}/activity?since=last+week&action=Bad%20Action`);
    expect(bad.status).toBe(400);
    expect(fieldError(bad.html, "since")).toContain("since must be a date");
    expect(fieldError(bad.html, "action")).toContain("action may contain only");
  });

  it("answers another user with 404", async () => {
    const page = await browse(stranger, `/companies/${companyId}/activity`);
    expect(page.status).toBe(404);
    expect(page.html).not.toContain("issue.commented");
  });
});

describe("company settings page", () => {
  it("saves name, description, budget, runs at once and the approval rule", async () => {
    const page = await browse(owner, `/companies/${companyId}/settings`);
    expect(page.status).toBe(200);
    expect(page.html).toMatch(/<input id="field-name" name="name"[^>]* value="Log Co /);
    const saved = await submit(owner, `/companies/${companyId}/settings`, {
      name: "Log Company",
      description: "Keeps records",
      budgetMonthlyCents: "50000",
      maxConcurrentRuns: "3",
      requireBoardApprovalForNewAgents: "on",
    });
    expect(saved.status).toBe(303);
    expect(await company()).toMatchObject({
      name: "Log Company",
      description: "Keeps records",
      budgetMonthlyCents: 50000,
      maxConcurrentRuns: 3,
      requireBoardApprovalForNewAgents: true,
    });
    expect((await browse(owner, `/companies/${companyId}/settings`)).html).toMatch(
      /<input id="field-maxConcurrentRuns" name="maxConcurrentRuns"[^>]* value="3"/,
    );
    const unticked = await submit(owner, `/companies/${companyId}/settings`, {
      name: "Log Company",
      description: "",
      budgetMonthlyCents: "0",
    });
    expect(unticked.status).toBe(303);
    expect(await company()).toMatchObject({
      description: null,
      maxConcurrentRuns: null,
      requireBoardApprovalForNewAgents: false,
    });
  });

  it("shows an empty name and a negative budget next to their fields and saves nothing", async () => {
    const before = await company();
    const bad = await submit(owner, `/companies/${companyId}/settings`, {
      name: "",
      budgetMonthlyCents: "-1",
      maxConcurrentRuns: "0",
    });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.html, "name")).toBeTruthy();
    expect(fieldError(bad.html, "budgetMonthlyCents")).toBeTruthy();
    expect(fieldError(bad.html, "maxConcurrentRuns")).toBeTruthy();
    expect(await company()).toEqual(before);
  });

  it("answers another user with 404 and changes nothing", async () => {
    const before = await company();
    expect((await browse(stranger, `/companies/${companyId}/settings`)).status).toBe(404);
    expect((await submit(stranger, `/companies/${companyId}/settings`, { name: "Mine now" })).status).toBe(
      404,
    );
    expect(await company()).toEqual(before);
  });
});
