// The approvals API through HTTP in workerd: create (agents as themselves, board users too), list by
// status, get, linked issues, comments, the company boundary (404) and bad bodies (400).
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import {
  activityOf,
  type BoardUser,
  type SeededAgent,
  type SeededCompany,
  seedAgent,
  seedIssue,
  seedTwoTenants,
} from "../helpers";

interface Approval {
  id: string;
  companyId: string;
  type: string;
  status: string;
  payload: Record<string, unknown>;
  requestedByAgentId: string | null;
  requestedByUserId: string | null;
  decisionNote: string | null;
  decidedByUserId: string | null;
  decidedAt: string | null;
}

let owner: BoardUser;
let outsider: BoardUser;
let company: SeededCompany;
let other: SeededCompany;
let agent: SeededAgent;
let foreignAgent: SeededAgent;

beforeAll(async () => {
  ({ owner, outsider, company, other, agent, foreignAgent } = await seedTwoTenants());
});

const create = (headers: Record<string, string>, body: unknown, companyId = company.id) =>
  call<Approval>("POST", `/api/companies/${companyId}/approvals`, { headers, body });

const strategy = { type: "approve_ceo_strategy", payload: { plan: "Ship the MVP" } };

describe("create", () => {
  it("an agent requests as itself: 201 pending, stored, logged", async () => {
    const res = await create(agent.headers, strategy);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      companyId: company.id,
      type: "approve_ceo_strategy",
      status: "pending",
      payload: { plan: "Ship the MVP" },
      requestedByAgentId: agent.id,
      requestedByUserId: null,
      decisionNote: null,
      decidedAt: null,
    });
    const row = await env.DB.prepare("SELECT status, requested_by_agent_id FROM approvals WHERE id = ?")
      .bind(res.body.id)
      .first();
    expect(row).toEqual({ status: "pending", requested_by_agent_id: agent.id });
    expect(await activityOf(res.body.id)).toEqual([
      { action: "approval.created", actor_type: "agent", actor_id: agent.id },
    ]);
  });

  it("an agent naming another agent as requester: 403; the same id as itself: 201", async () => {
    const colleague = await seedAgent(company.id);
    const forged = await create(agent.headers, { ...strategy, requestedByAgentId: colleague.id });
    expect(forged.status).toBe(403);
    const own = await create(agent.headers, { ...strategy, requestedByAgentId: agent.id });
    expect(own.status).toBe(201);
  });

  it("a board user creates, in their name and optionally for an agent of the company", async () => {
    const plain = await create(owner.headers, { type: "request_board_approval", payload: {} });
    expect(plain.status).toBe(201);
    expect(plain.body).toMatchObject({ requestedByAgentId: null, requestedByUserId: owner.userId });
    const forAgent = await create(owner.headers, { ...strategy, requestedByAgentId: agent.id });
    expect(forAgent.body).toMatchObject({ requestedByAgentId: agent.id, requestedByUserId: owner.userId });
    const foreign = await create(owner.headers, { ...strategy, requestedByAgentId: foreignAgent.id });
    expect(foreign.status).toBe(422);
  });

  it("links issueIds of the company; an issue of another company is 422 and nothing is stored", async () => {
    const a = await seedIssue(company);
    const b = await seedIssue(company);
    const res = await create(agent.headers, { ...strategy, issueIds: [b.id, a.id, b.id] });
    expect(res.status).toBe(201);
    const issues = await call<Array<{ id: string }>>("GET", `/api/approvals/${res.body.id}/issues`, {
      headers: owner.headers,
    });
    expect(issues.status).toBe(200);
    expect(issues.body.map((issue) => issue.id).sort()).toEqual([a.id, b.id].sort());

    const theirs = await seedIssue(other);
    const before = await env.DB.prepare("SELECT count(*) AS n FROM approvals").first<{ n: number }>();
    const bad = await create(agent.headers, { ...strategy, issueIds: [a.id, theirs.id] });
    expect(bad.status).toBe(422);
    const after = await env.DB.prepare("SELECT count(*) AS n FROM approvals").first<{ n: number }>();
    expect(after?.n).toBe(before?.n);
  });

  it("hire_agent needs payload.agentId naming a pending_approval agent of the company", async () => {
    const pending = await seedAgent(company.id, { status: "pending_approval" });
    expect((await create(owner.headers, { type: "hire_agent", payload: {} })).status).toBe(422);
    expect((await create(owner.headers, { type: "hire_agent", payload: { agentId: agent.id } })).status).toBe(
      422,
    );
    const foreign = await seedAgent(other.id, { status: "pending_approval" });
    expect(
      (await create(owner.headers, { type: "hire_agent", payload: { agentId: foreign.id } })).status,
    ).toBe(422);
    const ok = await create(owner.headers, { type: "hire_agent", payload: { agentId: pending.id } });
    expect(ok.status).toBe(201);
  });

  it("bad bodies are 400: unknown type, unknown field, payload not an object, bad issue id", async () => {
    for (const body of [
      { type: "buy_a_yacht", payload: {} },
      { ...strategy, extra: true },
      { type: "approve_ceo_strategy", payload: "plan" },
      { type: "approve_ceo_strategy" },
      { ...strategy, issueIds: [""] },
      { ...strategy, issueIds: [42] },
      { ...strategy, payload: { big: "x".repeat(70_000) } },
    ]) {
      const res = await create(agent.headers, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
    }
  });

  it("an issue key that names no issue of the company (id or identifier) is 422", async () => {
    const res = await create(agent.headers, { ...strategy, issueIds: ["not-a-uuid"] });
    expect(res.status).toBe(422);
  });

  it("another company's id is 404 for its agents and non-members", async () => {
    expect((await create(agent.headers, strategy, other.id)).status).toBe(404);
    expect((await create(outsider.headers, strategy)).status).toBe(404);
  });
});

describe("list and get", () => {
  it("lists newest first, filters by one or more statuses, 400 for an unknown status", async () => {
    const first = await create(agent.headers, strategy);
    const second = await create(agent.headers, strategy);
    // Older by a second, so "newest first" does not hinge on two requests in the same millisecond.
    await env.DB.prepare(
      "UPDATE approvals SET status = 'approved', created_at = created_at - 1000 WHERE id = ?",
    )
      .bind(first.body.id)
      .run();
    const path = `/api/companies/${company.id}/approvals`;

    const pending = await call<Approval[]>("GET", `${path}?status=pending`, { headers: owner.headers });
    expect(pending.status).toBe(200);
    expect(pending.body.every((row) => row.status === "pending")).toBe(true);
    const ids = pending.body.map((row) => row.id);
    expect(ids).toContain(second.body.id);
    expect(ids).not.toContain(first.body.id);

    const both = await call<Approval[]>("GET", `${path}?status=pending,approved`, { headers: agent.headers });
    const bothIds = both.body.map((row) => row.id);
    expect(bothIds.indexOf(second.body.id)).toBeLessThan(bothIds.indexOf(first.body.id));

    expect((await call("GET", `${path}?status=pending,bogus`, { headers: owner.headers })).status).toBe(400);
    expect((await call("GET", path, { headers: outsider.headers })).status).toBe(404);
    expect((await call("GET", path, { headers: foreignAgent.headers })).status).toBe(404);
  });

  it("gets one; another company's approval (or an unknown id) is 404", async () => {
    const made = await create(agent.headers, strategy);
    const got = await call<Approval>("GET", `/api/approvals/${made.body.id}`, { headers: owner.headers });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(made.body);
    for (const headers of [outsider.headers, foreignAgent.headers]) {
      expect((await call("GET", `/api/approvals/${made.body.id}`, { headers })).status).toBe(404);
      expect((await call("GET", `/api/approvals/${made.body.id}/issues`, { headers })).status).toBe(404);
    }
    expect(
      (await call("GET", `/api/approvals/${crypto.randomUUID()}`, { headers: owner.headers })).status,
    ).toBe(404);
  });
});

describe("comments", () => {
  it("board users and agents comment; listed oldest first; logged", async () => {
    const made = await create(agent.headers, strategy);
    const path = `/api/approvals/${made.body.id}/comments`;
    const one = await call<{ id: string; authorAgentId: string | null }>("POST", path, {
      headers: agent.headers,
      body: { body: "Plan attached" },
    });
    expect(one.status, JSON.stringify(one.body)).toBe(201);
    expect(one.body).toMatchObject({ approvalId: made.body.id, authorAgentId: agent.id, authorUserId: null });
    const two = await call("POST", path, { headers: owner.headers, body: { body: "Cut scope" } });
    expect(two.status).toBe(201);

    const list = await call<Array<{ body: string; authorUserId: string | null }>>("GET", path, {
      headers: owner.headers,
    });
    expect(list.status).toBe(200);
    expect(list.body.map((row) => row.body)).toEqual(["Plan attached", "Cut scope"]);
    expect(list.body[1]?.authorUserId).toBe(owner.userId);
    expect((await activityOf(made.body.id)).map((row) => row.action)).toEqual([
      "approval.created",
      "approval.comment_added",
      "approval.comment_added",
    ]);
  });

  it("400 for blank or unknown fields, 404 across companies", async () => {
    const made = await create(agent.headers, strategy);
    const path = `/api/approvals/${made.body.id}/comments`;
    expect((await call("POST", path, { headers: owner.headers, body: { body: "  " } })).status).toBe(400);
    expect((await call("POST", path, { headers: owner.headers, body: { body: "x", at: 1 } })).status).toBe(
      400,
    );
    expect((await call("POST", path, { headers: outsider.headers, body: { body: "hi" } })).status).toBe(404);
    expect((await call("GET", path, { headers: foreignAgent.headers })).status).toBe(404);
  });
});
