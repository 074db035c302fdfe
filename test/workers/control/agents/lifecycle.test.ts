import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import {
  activityOf,
  type BoardUser,
  boardUser,
  type SeededCompany,
  seedAgent,
  seedCompany,
  seedOrg,
} from "../helpers";

// Pause, resume, terminate, agent keys and the manual heartbeat.

type Json = Record<string, unknown>;

const post = (path: string, headers: Record<string, string>, body?: unknown) =>
  call<Json>("POST", `/api${path}`, { headers, body });

async function statusOf(agentId: string) {
  return (await env.DB.prepare("SELECT status, pause_reason, terminated_at FROM agents WHERE id = ?")
    .bind(agentId)
    .first<Json>()) as Json;
}

let board: BoardUser;
let company: SeededCompany;

beforeAll(async () => {
  board = await boardUser();
});

// A company per test: seedOrg adds a CEO, and a company has at most one (agents_one_ceo_uq).
beforeEach(async () => {
  company = await seedCompany(board);
});

describe("pause and resume", () => {
  it("pause → paused (manual), resume → idle, each logged", async () => {
    const org = await seedOrg(company.id);
    const paused = await post(`/agents/${org.engineer.id}/pause`, org.manager.headers);
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body).toMatchObject({ status: "paused", pauseReason: "manual" });
    expect(await statusOf(org.engineer.id)).toMatchObject({ status: "paused", pause_reason: "manual" });
    expect((await post(`/agents/${org.engineer.id}/pause`, board.headers)).status).toBe(200);
    const resumed = await post(`/agents/${org.engineer.id}/resume`, org.ceo.headers);
    expect(resumed.body).toMatchObject({ status: "idle", pauseReason: null });
    expect((await post(`/agents/${org.engineer.id}/resume`, board.headers)).status).toBe(422);
    expect((await activityOf(org.engineer.id)).map((entry) => entry.action)).toEqual([
      "agent.paused",
      "agent.resumed",
    ]);
  });

  it("lets only board users, the CEO and managers above the agent pause it", async () => {
    const org = await seedOrg(company.id);
    for (const caller of [org.peer, org.engineer]) {
      expect((await post(`/agents/${org.engineer.id}/pause`, caller.headers)).status).toBe(403);
    }
    expect((await post(`/agents/${org.manager.id}/pause`, org.engineer.headers)).status).toBe(403);
  });

  it("refuses pending_approval agents (422)", async () => {
    const pending = await seedAgent(company.id, { status: "pending_approval" });
    expect((await post(`/agents/${pending.id}/pause`, board.headers)).status).toBe(422);
    expect((await post(`/agents/${pending.id}/resume`, board.headers)).status).toBe(422);
  });
});

describe("terminate", () => {
  it("terminates, revokes every key (old key → 401) and is irreversible", async () => {
    const org = await seedOrg(company.id);
    const extra = await post(`/agents/${org.engineer.id}/keys`, org.engineer.headers, { name: "second" });
    expect(extra.status).toBe(201);
    const res = await post(`/agents/${org.engineer.id}/terminate`, org.manager.headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status).toBe("terminated");
    expect(res.body.terminatedAt).toEqual(expect.any(String));
    const keys = await env.DB.prepare("SELECT revoked_at FROM agent_api_keys WHERE agent_id = ?")
      .bind(org.engineer.id)
      .all<Json>();
    expect(keys.results).toHaveLength(2);
    expect(keys.results.every((key) => typeof key.revoked_at === "number")).toBe(true);
    expect((await call("GET", "/api/agents/me", { headers: org.engineer.headers })).status).toBe(401);
    const bearer = { Authorization: `Bearer ${extra.body.token}` };
    expect((await call("GET", "/api/agents/me", { headers: bearer })).status).toBe(401);

    const again = await post(`/agents/${org.engineer.id}/terminate`, board.headers);
    expect(again.status).toBe(200);
    expect(again.body.terminatedAt).toBe(res.body.terminatedAt);
    expect((await post(`/agents/${org.engineer.id}/resume`, board.headers)).status).toBe(422);
    expect((await post(`/agents/${org.engineer.id}/pause`, board.headers)).status).toBe(422);
    expect((await post(`/agents/${org.engineer.id}/keys`, board.headers, {})).status).toBe(401);
    const patch = await call("PATCH", `/api/agents/${org.engineer.id}`, {
      headers: board.headers,
      body: { title: "x" },
    });
    expect(patch.status).toBe(422);
    expect((await activityOf(org.engineer.id)).map((entry) => entry.action)).toEqual([
      "agent.key_created",
      "agent.terminated",
    ]);
  });

  it("moves the terminated agent's reports to its manager and cancels its open hire approval", async () => {
    const org = await seedOrg(company.id);
    const hire = await post(`/companies/${company.id}/agent-hires`, org.manager.headers, {
      name: `Hire ${crypto.randomUUID().slice(0, 6)}`,
      adapterType: "assistant_local",
    });
    expect(hire.status).toBe(201);
    const hired = (hire.body.agent as Json).id as string;
    const approvalId = (hire.body.approval as Json).id as string;
    expect((await post(`/agents/${hired}/terminate`, board.headers)).status).toBe(200);
    const approval = await env.DB.prepare("SELECT status FROM approvals WHERE id = ?")
      .bind(approvalId)
      .first<Json>();
    expect(approval?.status).toBe("cancelled");

    expect((await post(`/agents/${org.manager.id}/terminate`, org.ceo.headers)).status).toBe(200);
    const me = await call<Json>("GET", "/api/agents/me", { headers: org.engineer.headers });
    expect(me.body.reportsTo).toBe(org.ceo.id);
    expect(me.body.chainOfCommand).toEqual([expect.objectContaining({ id: org.ceo.id })]);
  });

  it("is refused to peers and subordinates (403)", async () => {
    const org = await seedOrg(company.id);
    expect((await post(`/agents/${org.engineer.id}/terminate`, org.peer.headers)).status).toBe(403);
    expect((await post(`/agents/${org.manager.id}/terminate`, org.engineer.headers)).status).toBe(403);
    expect((await statusOf(org.engineer.id)).status).toBe("idle");
  });
});

describe("agent keys", () => {
  it("creates a key shown once (SHA-256 at rest) that authenticates the agent", async () => {
    const org = await seedOrg(company.id);
    const res = await post(`/agents/${org.engineer.id}/keys`, board.headers, { name: "ci" });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ name: "ci", agentId: org.engineer.id, revokedAt: null });
    const token = res.body.token as string;
    expect(token).toMatch(/^swa_[0-9A-Za-z]{45}$/);
    const stored = await env.DB.prepare("SELECT key_hash FROM agent_api_keys WHERE id = ?")
      .bind(res.body.id)
      .first<Json>();
    expect(stored?.key_hash).not.toBe(token);
    expect(String(stored?.key_hash)).toMatch(/^[0-9a-f]{64}$/);
    const me = await call<Json>("GET", "/api/agents/me", { headers: { Authorization: `Bearer ${token}` } });
    expect(me.body.id).toBe(org.engineer.id);

    const list = await call<Json[]>("GET", `/api/agents/${org.engineer.id}/keys`, {
      headers: org.engineer.headers,
    });
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(2);
    expect(JSON.stringify(list.body)).not.toContain(token);
    expect(list.body.every((key) => !("token" in key) && !("keyHash" in key))).toBe(true);
  });

  it("allows the agent itself and managers above it, not peers or subordinates; no body means name default", async () => {
    const org = await seedOrg(company.id);
    const self = await post(`/agents/${org.engineer.id}/keys`, org.engineer.headers);
    expect(self.status).toBe(201);
    expect(self.body.name).toBe("default");
    expect((await post(`/agents/${org.engineer.id}/keys`, org.ceo.headers, {})).status).toBe(201);
    expect((await post(`/agents/${org.engineer.id}/keys`, org.peer.headers, {})).status).toBe(403);
    expect((await post(`/agents/${org.manager.id}/keys`, org.engineer.headers, {})).status).toBe(403);
    expect((await post(`/agents/${org.engineer.id}/keys`, board.headers, { token: "x" })).status).toBe(400);
  });

  it("a key already in use sees its agent's new role on the very next request", async () => {
    const own = await seedCompany(board);
    const agent = await seedAgent(own.id, { role: "engineer" });
    const brand = () =>
      call("PATCH", `/api/companies/${own.id}`, { headers: agent.headers, body: { brandColor: "#123456" } });
    expect((await brand()).status).toBe(403);
    const promoted = await call("PATCH", `/api/agents/${agent.id}`, {
      headers: board.headers,
      body: { role: "ceo" },
    });
    expect(promoted.status, JSON.stringify(promoted.body)).toBe(200);
    expect((await brand()).status).toBe(200);
  });

  it("revokes one key: it answers 401 afterwards, revoking again changes nothing", async () => {
    const org = await seedOrg(company.id);
    const created = await post(`/agents/${org.engineer.id}/keys`, board.headers, { name: "temp" });
    const bearer = { Authorization: `Bearer ${created.body.token}` };
    expect((await call("GET", "/api/agents/me", { headers: bearer })).status).toBe(200);
    const path = `/api/agents/${org.engineer.id}/keys/${created.body.id}`;
    const revoked = await call<Json>("DELETE", path, { headers: org.manager.headers });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    expect((await call("GET", "/api/agents/me", { headers: bearer })).status).toBe(401);
    expect((await call("GET", "/api/agents/me", { headers: org.engineer.headers })).status).toBe(200);
    expect((await call("DELETE", path, { headers: board.headers })).status).toBe(200);
    expect(
      (await call("DELETE", `/api/agents/${org.peer.id}/keys/${created.body.id}`, { headers: board.headers }))
        .status,
    ).toBe(404);
  });
});

describe("POST /agents/:agentId/heartbeat/invoke", () => {
  it("queues an on_demand run (202) and logs it", async () => {
    const org = await seedOrg(company.id);
    const res = await post(`/agents/${org.engineer.id}/heartbeat/invoke`, org.engineer.headers);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({
      agentId: org.engineer.id,
      status: "queued",
      invocationSource: "on_demand",
    });
    const run = await env.DB.prepare("SELECT * FROM heartbeat_runs WHERE id = ?")
      .bind(res.body.id)
      .first<Json>();
    expect(run).toMatchObject({
      status: "queued",
      invocation_source: "on_demand",
      wake_reason: "manual_invoke",
      requested_by_agent_id: org.engineer.id,
    });
    expect((await activityOf(org.engineer.id)).map((entry) => entry.action)).toEqual([
      "agent.heartbeat_invoked",
    ]);
    expect((await post(`/agents/${org.engineer.id}/heartbeat/invoke`, board.headers)).status).toBe(202);
    expect((await post(`/agents/${org.engineer.id}/heartbeat/invoke`, org.peer.headers)).status).toBe(403);
  });

  it("records a cancelled run and answers 409 for a paused or over-budget agent", async () => {
    const paused = await seedAgent(company.id, { status: "paused" });
    const res = await post(`/agents/${paused.id}/heartbeat/invoke`, board.headers);
    expect(res.status).toBe(409);
    expect(res.body.details).toMatchObject({ errorReason: "agent_paused" });
    const broke = await seedAgent(company.id, { budgetMonthlyCents: 100, spentMonthlyCents: 100 });
    const over = await post(`/agents/${broke.id}/heartbeat/invoke`, board.headers);
    expect(over.status).toBe(409);
    const runs = await env.DB.prepare(
      "SELECT status, error_reason FROM heartbeat_runs WHERE agent_id IN (?, ?)",
    )
      .bind(paused.id, broke.id)
      .all<Json>();
    expect(runs.results.map((run) => run.error_reason).sort()).toEqual(["agent_over_budget", "agent_paused"]);
    expect(runs.results.every((run) => run.status === "cancelled")).toBe(true);
  });

  it("pause cancels the agent's queued runs", async () => {
    const org = await seedOrg(company.id);
    const queued = await post(`/agents/${org.engineer.id}/heartbeat/invoke`, board.headers);
    await post(`/agents/${org.engineer.id}/pause`, board.headers);
    const run = await env.DB.prepare("SELECT status, error_reason FROM heartbeat_runs WHERE id = ?")
      .bind(queued.body.id)
      .first<Json>();
    expect(run).toMatchObject({ status: "cancelled", error_reason: "agent_paused" });
  });
});
