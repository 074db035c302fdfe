import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import {
  activityOf,
  type BoardUser,
  boardUser,
  type SeededCompany,
  seedAgent,
  seedCompany,
  seedIssue,
  seedOrg,
} from "../helpers";

// Creating agents (directly and as hires), reading them, chainOfCommand and the org chart.

type Json = Record<string, unknown>;
type Org = Awaited<ReturnType<typeof seedOrg>>;

const newAgent = (name: string, extra: Json = {}) => ({ name, adapterType: "coder_local", ...extra });
const unique = (label: string) => `${label} ${crypto.randomUUID().slice(0, 8)}`;

async function approvalRow(id: string) {
  return env.DB.prepare("SELECT * FROM approvals WHERE id = ?").bind(id).first<Json>();
}

let board: BoardUser;
let open: SeededCompany;
let gated: SeededCompany;
let openOrg: Org;
let gatedOrg: Org;

beforeAll(async () => {
  board = await boardUser();
  open = await seedCompany(board, { requireBoardApprovalForNewAgents: false });
  gated = await seedCompany(board);
  openOrg = await seedOrg(open.id);
  gatedOrg = await seedOrg(gated.id);
});

describe("POST /companies/:companyId/agents", () => {
  it("lets the board create an idle agent with defaults, logged as agent.created", async () => {
    const res = await call<Json>("POST", `/api/companies/${open.id}/agents`, {
      headers: board.headers,
      body: newAgent(unique("Builder"), { title: "Builder", reportsTo: openOrg.manager.id }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      companyId: open.id,
      role: "general",
      status: "idle",
      reportsTo: openOrg.manager.id,
      budgetMonthlyCents: 0,
      desiredSkills: [],
      sourceIssueIds: [],
      runtimeConfig: { heartbeat: { enabled: false, wakeOnDemand: true } },
    });
    expect(await activityOf(res.body.id as string)).toEqual([
      expect.objectContaining({ action: "agent.created", actor_type: "user", actor_id: board.userId }),
    ]);
  });

  it("lets the CEO create directly (as the new agent's manager) but not other agents", async () => {
    const byCeo = await call<Json>("POST", `/api/companies/${open.id}/agents`, {
      headers: openOrg.ceo.headers,
      body: newAgent(unique("Scout"), { role: "researcher" }),
    });
    expect(byCeo.status, JSON.stringify(byCeo.body)).toBe(201);
    expect(byCeo.body.reportsTo).toBe(openOrg.ceo.id);
    for (const caller of [openOrg.manager, openOrg.engineer]) {
      const res = await call("POST", `/api/companies/${open.id}/agents`, {
        headers: caller.headers,
        body: newAgent(unique("Nope")),
      });
      expect(res.status).toBe(403);
    }
  });

  it("keeps names unique ignoring case (409) and one CEO per company (422)", async () => {
    const name = unique("Twin");
    const first = await call("POST", `/api/companies/${open.id}/agents`, {
      headers: board.headers,
      body: newAgent(name),
    });
    expect(first.status).toBe(201);
    const second = await call("POST", `/api/companies/${open.id}/agents`, {
      headers: board.headers,
      body: newAgent(name.toUpperCase()),
    });
    expect(second.status).toBe(409);
    const ceo = await call("POST", `/api/companies/${open.id}/agents`, {
      headers: board.headers,
      body: newAgent(unique("Chief"), { role: "ceo" }),
    });
    expect(ceo.status).toBe(422);
  });

  it("rejects a manager from another company, a terminated manager, bad bodies and unknown source issues", async () => {
    const terminated = await seedAgent(open.id, { status: "terminated" });
    const cases: Array<[Json, number]> = [
      [newAgent(unique("X"), { reportsTo: gatedOrg.manager.id }), 422],
      [newAgent(unique("X"), { reportsTo: terminated.id }), 422],
      [newAgent(unique("X"), { sourceIssueIds: [crypto.randomUUID()] }), 422],
      [newAgent(unique("X"), { desiredSkills: ["no-such-skill"] }), 422],
      [newAgent(unique("X"), { role: "wizard" }), 400],
      [newAgent(unique("X"), { adapterType: "remote" }), 400],
      [newAgent(unique("X"), { surprise: true }), 400],
      [{ adapterType: "coder_local" }, 400],
    ];
    for (const [body, status] of cases) {
      const res = await call("POST", `/api/companies/${open.id}/agents`, { headers: board.headers, body });
      expect(res.status, JSON.stringify({ body, res: res.body })).toBe(status);
    }
  });

  it("answers 404 for a company the caller cannot see", async () => {
    const res = await call("POST", `/api/companies/${gated.id}/agents`, {
      headers: openOrg.ceo.headers,
      body: newAgent(unique("Spy")),
    });
    expect(res.status).toBe(404);
  });
});

describe("POST /companies/:companyId/agent-hires", () => {
  it("creates a pending_approval agent and a pending hire_agent approval when the company requires it", async () => {
    const issue = await seedIssue(gated);
    const res = await call<{ agent: Json; approval: Json }>(
      "POST",
      `/api/companies/${gated.id}/agent-hires`,
      {
        headers: gatedOrg.manager.headers,
        body: newAgent(unique("Hire"), {
          role: "engineer",
          adapterConfig: { cwd: "/srv", env: { OPENAI_API_KEY: "sk-live-123" } },
          sourceIssueId: issue.id,
        }),
      },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const { agent, approval } = res.body;
    expect(agent).toMatchObject({ status: "pending_approval", reportsTo: gatedOrg.manager.id });
    expect(approval).toMatchObject({
      type: "hire_agent",
      status: "pending",
      requestedByAgentId: gatedOrg.manager.id,
      payload: expect.objectContaining({ agentId: agent.id, role: "engineer" }),
    });
    const row = await approvalRow(approval.id as string);
    expect(row).toMatchObject({
      status: "pending",
      type: "hire_agent",
      requested_by_agent_id: gatedOrg.manager.id,
    });
    expect(String(row?.payload)).not.toContain("sk-live-123");
    const link = await env.DB.prepare("SELECT * FROM issue_approvals WHERE approval_id = ?")
      .bind(approval.id)
      .first<Json>();
    expect(link?.issue_id).toBe(issue.id);
    expect((await activityOf(agent.id as string)).map((entry) => entry.action)).toEqual([
      "agent.hire_requested",
    ]);
    const stored = await env.DB.prepare("SELECT status FROM agents WHERE id = ?")
      .bind(agent.id)
      .first<Json>();
    expect(stored?.status).toBe("pending_approval");
  });

  it("creates an idle agent with approval null when the company does not require approval", async () => {
    const res = await call<{ agent: Json; approval: unknown }>(
      "POST",
      `/api/companies/${open.id}/agent-hires`,
      {
        headers: board.headers,
        body: newAgent(unique("Direct")),
      },
    );
    expect(res.status).toBe(201);
    expect(res.body.agent.status).toBe("idle");
    expect(res.body.approval).toBeNull();
  });

  it("records the board user as requester", async () => {
    const res = await call<{ approval: Json }>("POST", `/api/companies/${gated.id}/agent-hires`, {
      headers: board.headers,
      body: newAgent(unique("BoardHire")),
    });
    expect(res.status).toBe(201);
    expect(res.body.approval).toMatchObject({ requestedByUserId: board.userId, requestedByAgentId: null });
  });

  it("refuses ICs (403) and managers placing hires outside their team (403), allows the CEO", async () => {
    const ic = await call("POST", `/api/companies/${gated.id}/agent-hires`, {
      headers: gatedOrg.engineer.headers,
      body: newAgent(unique("IcHire")),
    });
    expect(ic.status).toBe(403);
    const outside = await call("POST", `/api/companies/${gated.id}/agent-hires`, {
      headers: gatedOrg.manager.headers,
      body: newAgent(unique("Elsewhere"), { reportsTo: gatedOrg.ceo.id }),
    });
    expect(outside.status).toBe(403);
    const ceo = await call("POST", `/api/companies/${gated.id}/agent-hires`, {
      headers: gatedOrg.ceo.headers,
      body: newAgent(unique("CeoHire")),
    });
    expect(ceo.status).toBe(201);
  });

  it("locks a pending_approval agent out: its key answers 401 and no key can be created for it", async () => {
    const pending = await seedAgent(gated.id, { status: "pending_approval", reportsTo: gatedOrg.manager.id });
    expect((await call("GET", "/api/agents/me", { headers: pending.headers })).status).toBe(401);
    const byBoard = await call("POST", `/api/agents/${pending.id}/keys`, {
      headers: board.headers,
      body: {},
    });
    expect(byBoard.status).toBe(401);
    const byManager = await call("POST", `/api/agents/${pending.id}/keys`, {
      headers: gatedOrg.manager.headers,
    });
    expect(byManager.status).toBe(401);
  });
});

describe("reading agents", () => {
  it("GET /agents/me returns the caller with chainOfCommand nearest manager first; board callers get 403", async () => {
    const me = await call<Json>("GET", "/api/agents/me", { headers: openOrg.engineer.headers });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(openOrg.engineer.id);
    expect((me.body.chainOfCommand as Json[]).map((link) => link.id)).toEqual([
      openOrg.manager.id,
      openOrg.ceo.id,
    ]);
    expect((me.body.chainOfCommand as Json[])[1]).toEqual({
      id: openOrg.ceo.id,
      name: openOrg.ceo.name,
      role: "ceo",
      title: null,
    });
    expect((await call("GET", "/api/agents/me", { headers: board.headers })).status).toBe(403);
  });

  it("GET /agents/:id returns details with chainOfCommand; the CEO's is empty", async () => {
    const res = await call<Json>("GET", `/api/agents/${openOrg.peer.id}`, {
      headers: openOrg.engineer.headers,
    });
    expect(res.status).toBe(200);
    expect((res.body.chainOfCommand as Json[]).map((link) => link.id)).toEqual([
      openOrg.manager.id,
      openOrg.ceo.id,
    ]);
    const ceo = await call<Json>("GET", `/api/agents/${openOrg.ceo.id}`, { headers: board.headers });
    expect(ceo.body.chainOfCommand).toEqual([]);
    expect((await call("GET", `/api/agents/${crypto.randomUUID()}`, { headers: board.headers })).status).toBe(
      404,
    );
  });

  it("lists the company's agents with an optional status filter", async () => {
    const paused = await seedAgent(open.id, { status: "paused", reportsTo: openOrg.manager.id });
    const all = await call<Json[]>("GET", `/api/companies/${open.id}/agents`, { headers: board.headers });
    expect(all.status).toBe(200);
    expect(all.body.map((agent) => agent.id)).toEqual(expect.arrayContaining([openOrg.ceo.id, paused.id]));
    const onlyPaused = await call<Json[]>("GET", `/api/companies/${open.id}/agents?status=paused`, {
      headers: openOrg.engineer.headers,
    });
    expect(onlyPaused.body.map((agent) => agent.id)).toEqual([paused.id]);
    expect(
      (await call("GET", `/api/companies/${open.id}/agents?status=bogus`, { headers: board.headers })).status,
    ).toBe(400);
  });

  it("GET /companies/:id/org returns the reporting tree, terminated agents only on request", async () => {
    const company = await seedCompany(board);
    const org = await seedOrg(company.id);
    const gone = await seedAgent(company.id, { status: "terminated", reportsTo: org.ceo.id });
    type Node = { id: string; status: string; reports: Node[] };
    const res = await call<Node[]>("GET", `/api/companies/${company.id}/org`, {
      headers: org.engineer.headers,
    });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(1);
    const [ceo] = res.body;
    expect(ceo).toMatchObject({ id: org.ceo.id, role: "ceo", title: null, status: "idle" });
    expect(ceo?.reports.map((node) => node.id)).toEqual([org.manager.id]);
    expect(ceo?.reports[0]?.reports.map((node) => node.id).sort()).toEqual(
      [org.engineer.id, org.peer.id].sort(),
    );
    const withGone = await call<Node[]>("GET", `/api/companies/${company.id}/org?includeTerminated=true`, {
      headers: board.headers,
    });
    expect(withGone.body[0]?.reports.map((node) => node.id).sort()).toEqual([org.manager.id, gone.id].sort());
  });
});
