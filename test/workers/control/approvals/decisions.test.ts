// Approval decisions through HTTP in workerd: every transition (allowed and 422), who may take it
// (board vs agents; requester vs other agents on resubmit), idempotent repeats, concurrent decisions,
// hire effects on the pending agent and its keys, and the requester's wake run.
import { env } from "cloudflare:workers";
import { and, eq, inArray } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import {
  approvalActivity,
  hireEffects,
  requesterWake,
  type Transition,
} from "../../../../workers/control/approvals/effects";
import { database } from "../../../../workers/db/client";
import { type AgentRow, type ApprovalRow, agents, approvals } from "../../../../workers/db/schema";
import { call } from "../../helpers";
import {
  activityOf,
  type BoardUser,
  type SeededAgent,
  type SeededCompany,
  seedAgent,
  seedTwoTenants,
} from "../helpers";

interface Approval {
  id: string;
  status: string;
  payload: Record<string, unknown>;
  decisionNote: string | null;
  decidedByUserId: string | null;
  decidedAt: string | null;
  updatedAt: string;
}

let owner: BoardUser;
let outsider: BoardUser;
let company: SeededCompany;
let requester: SeededAgent;

beforeAll(async () => {
  ({ owner, outsider, company, agent: requester } = await seedTwoTenants());
});

const request = async (body: Record<string, unknown> = {}, headers = requester.headers) => {
  const res = await call<Approval>("POST", `/api/companies/${company.id}/approvals`, {
    headers,
    body: { type: "request_board_approval", payload: { ask: "budget" }, ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
};

const act = (id: string, action: string, headers: Record<string, string>, body?: unknown) =>
  call<Approval & { error?: string }>("POST", `/api/approvals/${id}/${action}`, { headers, body });

const statusOf = async (id: string) =>
  (await env.DB.prepare("SELECT status FROM approvals WHERE id = ?").bind(id).first<{ status: string }>())
    ?.status;

const wakesFor = (agentId: string, approvalId: string) =>
  env.DB.prepare(
    `SELECT status, invocation_source, wake_reason, approval_id, approval_status, requested_by_user_id
     FROM heartbeat_runs WHERE agent_id = ? AND approval_id = ? ORDER BY created_at`,
  )
    .bind(agentId, approvalId)
    .all()
    .then((r) => r.results);

describe("approve and reject", () => {
  it("approve: pending → approved with note and decider; repeat 200 unchanged; reject then 422", async () => {
    const approval = await request();
    const res = await act(approval.id, "approve", owner.headers, { decisionNote: "Go" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: "approved", decisionNote: "Go", decidedByUserId: owner.userId });
    expect(res.body.decidedAt).not.toBeNull();

    const again = await act(approval.id, "approve", owner.headers, { decisionNote: "Other note" });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(res.body);

    const opposite = await act(approval.id, "reject", owner.headers);
    expect(opposite.status).toBe(422);
    expect(opposite.body.error).toContain("Only pending or revision requested approvals can be rejected");
    expect(await statusOf(approval.id)).toBe("approved");
    expect((await activityOf(approval.id)).map((row) => row.action)).toEqual([
      "approval.created",
      "approval.approved",
    ]);
  });

  it("reject without a body; repeat 200; approve afterwards 422", async () => {
    const approval = await request();
    const res = await act(approval.id, "reject", owner.headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: "rejected", decisionNote: null });
    expect((await act(approval.id, "reject", owner.headers)).status).toBe(200);
    const opposite = await act(approval.id, "approve", owner.headers);
    expect(opposite.status).toBe(422);
    expect(await statusOf(approval.id)).toBe("rejected");
  });

  it("decides from revision_requested; a cancelled approval is 422 for both decisions", async () => {
    const approval = await request();
    expect((await act(approval.id, "request-revision", owner.headers)).status).toBe(200);
    expect((await act(approval.id, "approve", owner.headers)).body.status).toBe("approved");

    const cancelled = await request();
    await env.DB.prepare("UPDATE approvals SET status = 'cancelled' WHERE id = ?").bind(cancelled.id).run();
    expect((await act(cancelled.id, "approve", owner.headers)).status).toBe(422);
    expect((await act(cancelled.id, "reject", owner.headers)).status).toBe(422);
  });

  it("agents may not decide (403), even the requester; other companies get 404", async () => {
    const approval = await request();
    for (const action of ["approve", "reject", "request-revision"]) {
      expect((await act(approval.id, action, requester.headers)).status).toBe(403);
      expect((await act(approval.id, action, outsider.headers)).status).toBe(404);
    }
    expect(await statusOf(approval.id)).toBe("pending");
  });

  it("400 for unknown fields or a wrong note type", async () => {
    const approval = await request();
    expect((await act(approval.id, "approve", owner.headers, { note: "x" })).status).toBe(400);
    expect((await act(approval.id, "reject", owner.headers, { decisionNote: 5 })).status).toBe(400);
    expect(await statusOf(approval.id)).toBe("pending");
  });

  it("concurrent approve and reject: exactly one wins, the other sees 200 (same) or 422", async () => {
    const approval = await request();
    const [a, b] = await Promise.all([
      act(approval.id, "approve", owner.headers),
      act(approval.id, "reject", owner.headers),
    ]);
    const final = await statusOf(approval.id);
    const winner = final === "approved" ? a : b;
    const loser = final === "approved" ? b : a;
    expect(winner.status).toBe(200);
    expect(loser.status).toBe(422);
    const decisions = (await activityOf(approval.id)).filter((row) => row.action !== "approval.created");
    expect(decisions).toHaveLength(1);
    expect((await wakesFor(requester.id, approval.id)).length).toBe(1);
  });
});

describe("request-revision and resubmit", () => {
  it("request-revision: pending → revision_requested; again 422; from approved 422", async () => {
    const approval = await request();
    const res = await act(approval.id, "request-revision", owner.headers, { decisionNote: "More detail" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "revision_requested", decisionNote: "More detail" });
    expect((await act(approval.id, "request-revision", owner.headers)).status).toBe(422);
    const approved = await request();
    await act(approved.id, "approve", owner.headers);
    expect((await act(approved.id, "request-revision", owner.headers)).status).toBe(422);
  });

  it("resubmit by the requester: → pending, decision cleared, payload replaced; from pending 422", async () => {
    const approval = await request();
    await act(approval.id, "request-revision", owner.headers, { decisionNote: "More detail" });
    const res = await act(approval.id, "resubmit", requester.headers, { payload: { ask: "smaller budget" } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      status: "pending",
      payload: { ask: "smaller budget" },
      decisionNote: null,
      decidedByUserId: null,
      decidedAt: null,
    });
    const stored = await call<Approval>("GET", `/api/approvals/${approval.id}`, { headers: owner.headers });
    expect(stored.body).toMatchObject({ status: "pending", payload: { ask: "smaller budget" } });
    expect((await act(approval.id, "resubmit", requester.headers)).status).toBe(422);
    expect((await activityOf(approval.id)).map((row) => row.action)).toEqual([
      "approval.created",
      "approval.revision_requested",
      "approval.resubmitted",
    ]);
  });

  it("resubmit: a board user may (payload kept without one); another agent 403; outsider 404", async () => {
    const approval = await request();
    await act(approval.id, "request-revision", owner.headers);
    const colleague = await seedAgent(company.id);
    expect((await act(approval.id, "resubmit", colleague.headers)).status).toBe(403);
    expect((await act(approval.id, "resubmit", outsider.headers)).status).toBe(404);
    expect((await act(approval.id, "resubmit", owner.headers, { payload: [] })).status).toBe(400);
    const res = await act(approval.id, "resubmit", owner.headers);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "pending", payload: { ask: "budget" } });
  });
});

describe("wakes", () => {
  it("approve and reject wake the requesting agent with the approval's id and status", async () => {
    const approved = await request();
    await act(approved.id, "approve", owner.headers);
    expect(await wakesFor(requester.id, approved.id)).toEqual([
      {
        status: "queued",
        invocation_source: "approval",
        wake_reason: "approval_approved",
        approval_id: approved.id,
        approval_status: "approved",
        requested_by_user_id: owner.userId,
      },
    ]);
    const rejected = await request();
    await act(rejected.id, "reject", owner.headers);
    expect(await wakesFor(requester.id, rejected.id)).toMatchObject([
      { wake_reason: "approval_rejected", approval_status: "rejected" },
    ]);
    // A repeated decision changes nothing, so it wakes nobody again.
    await act(rejected.id, "reject", owner.headers);
    expect(await wakesFor(requester.id, rejected.id)).toHaveLength(1);
  });

  it("a board-filed approval without an agent wakes nobody", async () => {
    const approval = await request({}, owner.headers);
    await act(approval.id, "approve", owner.headers);
    const runs = await env.DB.prepare("SELECT count(*) AS n FROM heartbeat_runs WHERE approval_id = ?")
      .bind(approval.id)
      .first<{ n: number }>();
    expect(runs?.n).toBe(0);
  });
});

describe("hire_agent effects", () => {
  const hire = async () => {
    const pending = await seedAgent(company.id, { status: "pending_approval" });
    const approval = await request({
      type: "hire_agent",
      payload: { agentId: pending.id, name: pending.name },
    });
    return { pending, approval };
  };
  const agentRow = (id: string) =>
    env.DB.prepare("SELECT status, terminated_at FROM agents WHERE id = ?")
      .bind(id)
      .first<{ status: string; terminated_at: number | null }>();

  it("approve: the agent becomes idle, its key works, keys can be created; logged on the agent", async () => {
    const { pending, approval } = await hire();
    expect((await call("GET", "/api/agents/me", { headers: pending.headers })).status).toBe(401);
    expect((await act(approval.id, "approve", owner.headers)).status).toBe(200);
    expect((await agentRow(pending.id))?.status).toBe("idle");
    expect((await call("GET", "/api/agents/me", { headers: pending.headers })).status).toBe(200);
    const key = await call("POST", `/api/agents/${pending.id}/keys`, { headers: owner.headers, body: {} });
    expect(key.status).toBe(201);
    expect((await activityOf(pending.id)).map((row) => row.action)).toContain("agent.hire_approved");
    expect(await wakesFor(requester.id, approval.id)).toMatchObject([{ wake_reason: "approval_approved" }]);
  });

  it("reject: the agent is terminated, keys revoked (401), key creation 401; requester woken", async () => {
    const { pending, approval } = await hire();
    expect((await act(approval.id, "reject", owner.headers)).status).toBe(200);
    const row = await agentRow(pending.id);
    expect(row?.status).toBe("terminated");
    expect(row?.terminated_at).not.toBeNull();
    const keys = await env.DB.prepare("SELECT revoked_at FROM agent_api_keys WHERE agent_id = ?")
      .bind(pending.id)
      .all<{ revoked_at: number | null }>();
    expect(keys.results.length).toBeGreaterThan(0);
    expect(keys.results.every((key) => key.revoked_at !== null)).toBe(true);
    expect((await call("GET", "/api/agents/me", { headers: pending.headers })).status).toBe(401);
    const key = await call("POST", `/api/agents/${pending.id}/keys`, { headers: owner.headers, body: {} });
    expect(key.status).toBe(401);
    expect((await activityOf(pending.id)).map((row) => row.action)).toContain("agent.hire_rejected");
    expect(await wakesFor(requester.id, approval.id)).toMatchObject([{ wake_reason: "approval_rejected" }]);
  });

  it("a resubmitted hire may not switch to another agent (422)", async () => {
    const { approval } = await hire();
    const { pending: second } = await hire();
    await act(approval.id, "request-revision", owner.headers);
    const res = await act(approval.id, "resubmit", requester.headers, { payload: { agentId: second.id } });
    expect(res.status).toBe(422);
    expect(await statusOf(approval.id)).toBe("revision_requested");
  });
});

describe("a decision that lost the race", () => {
  it("writes nothing: its batch's effects are tied to its own conditional UPDATE", async () => {
    const pending = await seedAgent(company.id, { status: "pending_approval" });
    const approval = await request({ type: "hire_agent", payload: { agentId: pending.id } });
    const db = database(env.DB);
    const stale = (await db
      .select()
      .from(approvals)
      .where(eq(approvals.id, approval.id))
      .get()) as ApprovalRow;
    const hired = (await db.select().from(agents).where(eq(agents.id, pending.id)).get()) as AgentRow;
    const requesterRow = (await db
      .select()
      .from(agents)
      .where(eq(agents.id, requester.id))
      .get()) as AgentRow;
    // The winner: approved through the API after our "read" above.
    expect((await act(approval.id, "approve", owner.headers)).status).toBe(200);

    // The loser replays what the reject route would commit from its stale read.
    const now = Date.now() + 5;
    const t: Transition = {
      approval: stale,
      status: "rejected",
      actor: { type: "board", userId: owner.userId },
      now,
    };
    const [moved] = await db.batch([
      db
        .update(approvals)
        .set({ status: "rejected", decidedByUserId: owner.userId, decidedAt: now, updatedAt: now })
        .where(
          and(eq(approvals.id, approval.id), inArray(approvals.status, ["pending", "revision_requested"])),
        ),
      ...approvalActivity(db, t, "approval.rejected", {}),
      ...hireEffects(db, t, hired),
      ...requesterWake(db, t, requesterRow, "approval_rejected").statements,
    ]);
    expect(moved.meta.changes).toBe(0);
    expect(await statusOf(approval.id)).toBe("approved");
    expect(await agentRowStatus(pending.id)).toBe("idle");
    expect((await activityOf(approval.id)).map((row) => row.action)).toEqual([
      "approval.created",
      "approval.approved",
    ]);
    expect((await activityOf(pending.id)).map((row) => row.action)).toEqual(["agent.hire_approved"]);
    expect(await wakesFor(requester.id, approval.id)).toMatchObject([{ wake_reason: "approval_approved" }]);
    const revoked = await env.DB.prepare(
      "SELECT count(*) AS n FROM agent_api_keys WHERE agent_id = ? AND revoked_at IS NOT NULL",
    )
      .bind(pending.id)
      .first<{ n: number }>();
    expect(revoked?.n).toBe(0);
  });
});

const agentRowStatus = async (id: string) =>
  (await env.DB.prepare("SELECT status FROM agents WHERE id = ?").bind(id).first<{ status: string }>())
    ?.status;
