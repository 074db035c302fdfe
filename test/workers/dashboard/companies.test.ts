// Board pages in workerd, through the dashboard URLs: the companies list and its New company form,
// a company's overview, and the org chart with its Hire an agent form and pause / resume buttons.
import { beforeAll, describe, expect, it } from "vitest";
import { asSession, call, count, createUser, type Session } from "../helpers";
import { browse, fieldError, formError, submit, textOf } from "./helpers";

type Json = Record<string, unknown>;
type Owner = Session & { email: string };

let owner: Owner;
let stranger: Owner;

beforeAll(async () => {
  owner = await createUser("OWNER");
  stranger = await createUser("OWNER");
});

async function newCompany(user: Session, body: Json = {}): Promise<{ id: string; name: string }> {
  const res = await call<{ id: string; name: string }>("POST", "/api/companies", {
    headers: asSession(user),
    body: { name: `Co ${crypto.randomUUID().slice(0, 6)}`, ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function agentsOf(user: Session, companyId: string): Promise<Json[]> {
  const res = await call<Json[]>("GET", `/api/companies/${companyId}/agents`, { headers: asSession(user) });
  expect(res.status).toBe(200);
  return res.body;
}

describe("companies", () => {
  it("lists the viewer's companies with prefix, status and money", async () => {
    const mine = await newCompany(owner, { budgetMonthlyCents: 12_345 });
    const theirs = await newCompany(stranger);
    const page = await browse(owner, "/companies");
    expect(page.status).toBe(200);
    const text = textOf(page.html);
    expect(text).toContain(mine.name);
    expect(text).toContain("$123.45");
    expect(text).not.toContain(theirs.name);
    expect(page.html).toContain(`href="/companies/${mine.id}"`);
    expect(page.html).toMatch(/<input[^>]*name="requireBoardApprovalForNewAgents"[^>]*checked/);
  });

  it("creates a company with the form and redirects to it with a flash", async () => {
    const name = `Form Co ${crypto.randomUUID().slice(0, 6)}`;
    const res = await submit(owner, "/companies", {
      name,
      description: "Made in a test",
      budgetMonthlyCents: "5000",
    });
    expect(res.status).toBe(303);
    const id = res.location?.match(/^\/companies\/([\w-]+)$/)?.[1] ?? "";
    const api = await call<Json>("GET", `/api/companies/${id}`, { headers: asSession(owner) });
    expect(api.body).toMatchObject({
      name,
      description: "Made in a test",
      budgetMonthlyCents: 5000,
      requireBoardApprovalForNewAgents: false,
    });
    const cookie = `${owner.cookie}; ${(res.headers.get("set-cookie") ?? "").split(";")[0]}`;
    const overview = await browse({ ...owner, cookie }, res.location ?? "");
    expect(textOf(overview.html)).toContain(`Company ${name} created`);
  });

  it("keeps the board-approval checkbox when ticked", async () => {
    const res = await submit(owner, "/companies", {
      name: `Strict ${crypto.randomUUID().slice(0, 6)}`,
      requireBoardApprovalForNewAgents: "on",
    });
    expect(res.status).toBe(303);
    const id = res.location?.split("/").pop() ?? "";
    const api = await call<Json>("GET", `/api/companies/${id}`, { headers: asSession(owner) });
    expect(api.body.requireBoardApprovalForNewAgents).toBe(true);
  });

  it("shows the API's messages next to name and budget and creates nothing", async () => {
    const before = await count("companies");
    const res = await submit(owner, "/companies", { name: "   ", budgetMonthlyCents: "-5" });
    expect(res.status).toBe(400);
    expect(fieldError(res.html, "name")).toMatch(/\S/);
    expect(fieldError(res.html, "budgetMonthlyCents")).toMatch(/>=\s?0|too small|at least/i);
    expect(res.html).toContain('value="-5"');
    expect(await count("companies")).toBe(before);
  });

  it("shows the overview: summary counts and recent activity", async () => {
    const company = await newCompany(owner);
    const issue = await call("POST", `/api/companies/${company.id}/issues`, {
      headers: asSession(owner),
      body: { title: "Paint the fence" },
    });
    expect(issue.status).toBe(201);
    const page = await browse(owner, `/companies/${company.id}`);
    expect(page.status).toBe(200);
    const text = textOf(page.html);
    expect(text).toContain(company.name);
    expect(text).toContain("1 open of 1");
    expect(text).toMatch(/You issue created: Paint the fence/);
    expect(page.html).toContain(`href="/companies/${company.id}" aria-current="page">Overview`);
    expect(text).toContain("$0.00 spent; no monthly budget");
  });

  it("answers another user's company with the API's 404 page", async () => {
    const theirs = await newCompany(stranger);
    for (const path of ["", "/org", "/issues", "/approvals", "/costs", "/routines"]) {
      const page = await browse(owner, `/companies/${theirs.id}${path}`);
      expect(page.status, path).toBe(404);
      expect(textOf(page.html)).toContain("Company not found");
    }
  });
});

describe("org chart", () => {
  it("nests agents by reporting line and offers pause or resume", async () => {
    const company = await newCompany(owner, { requireBoardApprovalForNewAgents: false });
    const headers = asSession(owner);
    const ceo = await call<{ agent: Json }>("POST", `/api/companies/${company.id}/agent-hires`, {
      headers,
      body: { name: "Ada", role: "ceo", adapterType: "coder_local" },
    });
    const eng = await call<{ agent: Json }>("POST", `/api/companies/${company.id}/agent-hires`, {
      headers,
      body: {
        name: "Bob",
        role: "engineer",
        title: "Builder",
        reportsTo: ceo.body.agent.id,
        adapterType: "coder_local",
      },
    });
    expect(eng.status).toBe(201);
    const page = await browse(owner, `/companies/${company.id}/org`);
    expect(page.status).toBe(200);
    expect(page.html).toMatch(
      /<ul class="tree">\s*<li>[\s\S]*Ada[\s\S]*<ul>\s*<li>[\s\S]*Bob[\s\S]*engineer, Builder/,
    );
    expect(page.html).toContain(`action="/agents/${eng.body.agent.id}/pause"`);
    expect(page.html).toMatch(/<option value="ceo"/);
    expect(page.html).toMatch(/<option value="coder_local"/);

    const paused = await submit(owner, `/agents/${eng.body.agent.id}/pause`);
    expect(paused.status).toBe(303);
    expect(paused.location).toBe(`/companies/${company.id}/org`);
    const agent = await call<Json>("GET", `/api/agents/${eng.body.agent.id}`, { headers });
    expect(agent.body.status).toBe("paused");
    const again = await browse(owner, `/companies/${company.id}/org`);
    expect(again.html).toContain(`action="/agents/${eng.body.agent.id}/resume"`);
    const resumed = await submit(owner, `/agents/${eng.body.agent.id}/resume`);
    expect(resumed.status).toBe(303);
    expect((await call<Json>("GET", `/api/agents/${eng.body.agent.id}`, { headers })).body.status).toBe(
      "idle",
    );

    // Resuming an agent that is not paused: the API's 422 shows as the page's alert.
    const refused = await submit(owner, `/agents/${eng.body.agent.id}/resume`);
    expect(refused.status).toBe(422);
    expect(textOf(refused.html)).toContain("Bob: agent is idle, not paused");
  });

  it("requests a hire that waits for approval, with the form's fields as the API's body", async () => {
    const company = await newCompany(owner);
    const res = await submit(owner, `/companies/${company.id}/agent-hires`, {
      name: "Cleo",
      role: "engineer",
      title: "Tester",
      reportsTo: "",
      adapterType: "coder_local",
      adapterConfig: '{"command": "node", "args": ["agent.mjs"]}',
      budgetMonthlyCents: "2500",
    });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/companies/${company.id}/org`);
    expect(decodeURIComponent(res.headers.get("set-cookie") ?? "")).toContain(
      "Hire requested: approve it under Approvals",
    );
    const [agent] = await agentsOf(owner, company.id);
    expect(agent).toMatchObject({
      name: "Cleo",
      role: "engineer",
      title: "Tester",
      reportsTo: null,
      status: "pending_approval",
      adapterConfig: { command: "node", args: ["agent.mjs"] },
      budgetMonthlyCents: 2500,
    });
    const page = await browse(owner, `/companies/${company.id}/org`);
    expect(textOf(page.html)).toMatch(/1 hire waiting for the board: Cleo/);
  });

  it("hires at once in a company without board approval", async () => {
    const company = await newCompany(owner, { requireBoardApprovalForNewAgents: false });
    const res = await submit(owner, `/companies/${company.id}/agent-hires`, {
      name: "Dan",
      role: "general",
      adapterType: "assistant_local",
      adapterConfig: "",
    });
    expect(res.status).toBe(303);
    expect(decodeURIComponent(res.headers.get("set-cookie") ?? "")).toContain("Agent hired");
    expect((await agentsOf(owner, company.id))[0]?.status).toBe("idle");
  });

  it("refuses adapter config that is not JSON without calling the API", async () => {
    const company = await newCompany(owner);
    const before = await count("agents");
    const res = await submit(owner, `/companies/${company.id}/agent-hires`, {
      name: "Eve",
      role: "engineer",
      adapterType: "coder_local",
      adapterConfig: "{not json",
    });
    expect(res.status).toBe(400);
    expect(fieldError(res.html, "adapterConfig")).toMatch(/^Not valid JSON: /);
    expect(res.html).toContain("{not json");
    expect(await count("agents")).toBe(before);

    // JSON the API refuses: its message for the nested path sits next to the textarea too.
    const wrongShape = await submit(owner, `/companies/${company.id}/agent-hires`, {
      name: "Eve",
      role: "engineer",
      adapterType: "coder_local",
      adapterConfig: '{"args": "agent.mjs"}',
    });
    expect(wrongShape.status).toBe(400);
    expect(fieldError(wrongShape.html, "adapterConfig")).toMatch(/^args: .*array/i);
    expect(await count("agents")).toBe(before);
  });

  it("shows the API's messages next to the fields: a blank name, a taken name", async () => {
    const company = await newCompany(owner, { requireBoardApprovalForNewAgents: false });
    const blank = await submit(owner, `/companies/${company.id}/agent-hires`, {
      name: "",
      role: "engineer",
      adapterType: "coder_local",
      budgetMonthlyCents: "lots",
    });
    expect(blank.status).toBe(400);
    expect(fieldError(blank.html, "name")).toBe("name is required");
    expect(fieldError(blank.html, "budgetMonthlyCents")).toMatch(/number/i);
    expect(await agentsOf(owner, company.id)).toEqual([]);

    expect(
      (
        await submit(owner, `/companies/${company.id}/agent-hires`, {
          name: "Fay",
          role: "qa",
          adapterType: "coder_local",
        })
      ).status,
    ).toBe(303);
    const taken = await submit(owner, `/companies/${company.id}/agent-hires`, {
      name: "fay",
      role: "qa",
      adapterType: "coder_local",
    });
    expect(taken.status).toBe(409);
    expect(formError(taken.html)).toMatch(/already exists/);
    expect(await agentsOf(owner, company.id)).toHaveLength(1);
  });

  it("does not pause another company's agent", async () => {
    const theirs = await newCompany(stranger, { requireBoardApprovalForNewAgents: false });
    const hire = await call<{ agent: Json }>("POST", `/api/companies/${theirs.id}/agent-hires`, {
      headers: asSession(stranger),
      body: { name: "Gus", adapterType: "coder_local" },
    });
    const res = await submit(owner, `/agents/${hire.body.agent.id}/pause`);
    expect(res.status).toBe(404);
    const agent = await call<Json>("GET", `/api/agents/${hire.body.agent.id}`, {
      headers: asSession(stranger),
    });
    expect(agent.body.status).toBe("idle");
  });
});
