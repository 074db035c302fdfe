// What the dispatcher does with runs beyond handing them out: cancel (queued at once, running through
// the runner's link), one run per agent unless maxConcurrentRuns says more, the agent's status while
// it runs, a paused or archived company starting nothing, and waitingForRunner.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { eventually } from "../../patience";
import { boardUser, seedAgent, seedCompany } from "../helpers";
import { claimOne, openRunnerLink, registerRunner, runnerFor } from "../runner-link";

type Json = Record<string, unknown>;

beforeEach(async () => {
  await env.DB.prepare(
    "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
  ).run();
});

const runRow = (id: string) =>
  env.DB.prepare("SELECT * FROM heartbeat_runs WHERE id = ?").bind(id).first<Json>();
const agentStatus = async (id: string) =>
  (await env.DB.prepare("SELECT status FROM agents WHERE id = ?").bind(id).first<Json>())?.status;

async function invoke(headers: Record<string, string>, agentId: string) {
  return call<Json>("POST", `/api/agents/${agentId}/heartbeat/invoke`, { headers });
}

async function assign(headers: Record<string, string>, companyId: string, agentId: string) {
  const created = await call<Json>("POST", `/api/companies/${companyId}/issues`, {
    headers,
    body: { title: `Work ${crypto.randomUUID().slice(0, 6)}`, assigneeAgentId: agentId },
  });
  expect(created.status).toBe(201);
}

describe("cancel", () => {
  it("cancels a queued run at once; a manager may, a peer may not, another tenant gets 404", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const lead = await seedAgent(company.id, { name: "Lead" });
    const peer = await seedAgent(company.id, { name: "Peer" });
    const worker = await seedAgent(company.id, { name: "Worker", reportsTo: lead.id });
    const stranger = await boardUser();
    const queued = await invoke(board.headers, worker.id);
    const runId = String(queued.body.id);
    const cancel = (headers: Record<string, string>) =>
      call<Json>("POST", `/api/heartbeat-runs/${runId}/cancel`, { headers });
    expect((await cancel(stranger.headers)).status).toBe(404);
    expect((await cancel(peer.headers)).status).toBe(403);
    expect((await runRow(runId))?.status).toBe("queued");
    const done = await cancel(lead.headers);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: "cancelled", errorReason: "cancelled" });
    expect((await cancel(board.headers)).status).toBe(409);
    expect(
      (await call("POST", "/api/heartbeat-runs/not-a-uuid/cancel", { headers: board.headers })).status,
    ).toBe(400);
  });

  it("asks the runner holding a running run to stop it; the finish then ends it cancelled", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const worker = await seedAgent(company.id, { name: "Busy", adapterConfig: { command: "sleep" } });
    await invoke(board.headers, worker.id);
    const link = await runnerFor(board, company.id);
    const run = await claimOne(link);
    const asked = await call<Json>("POST", `/api/heartbeat-runs/${run.runId}/cancel`, {
      headers: board.headers,
    });
    expect(asked.status).toBe(202);
    expect(asked.body).toMatchObject({ status: "running", cancelRequestedAt: expect.any(String) });
    await link.next((f) => f.type === "cancel" && f.runId === run.runId);
    link.send({ type: "finish", runId: run.runId, exitCode: null, timedOut: false, logFrames: 0 });
    await eventually(async () => (await runRow(run.runId))?.status === "cancelled");
    // The agent settles after the run row ends (endRun's last step), so it may lag it by a moment.
    await eventually(async () => (await agentStatus(worker.id)) === "idle");
  });
});

describe("one run at a time per agent", () => {
  it("a second run of the same agent waits until the first ends; maxConcurrentRuns 2 lets two run", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const solo = await seedAgent(company.id, { name: "Solo", adapterConfig: { command: "true" } });
    await assign(board.headers, company.id, solo.id);
    await assign(board.headers, company.id, solo.id);
    const link = await runnerFor(board, company.id);
    link.send({ type: "claim", slots: 2 });
    const first = await link.next((f) => f.type === "run");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(link.frames.filter((f) => f.type === "run")).toHaveLength(1);
    expect(await agentStatus(solo.id)).toBe("running");
    const firstId = String((first.run as Json).runId);
    link.send({ type: "finish", runId: firstId, exitCode: 0, timedOut: false, logFrames: 0 });
    await eventually(async () => (await runRow(firstId))?.status === "succeeded");
    const second = await claimOne(link);
    expect(second.runId).not.toBe(firstId);
    expect((await runRow(second.runId))?.started_at).toBeGreaterThanOrEqual(
      Number((await runRow(firstId))?.finished_at),
    );

    const pair = await seedAgent(company.id, { name: "Pair", adapterConfig: { command: "true" } });
    await env.DB.prepare("UPDATE agents SET runtime_config = ? WHERE id = ?")
      .bind(JSON.stringify({ maxConcurrentRuns: 2 }), pair.id)
      .run();
    await assign(board.headers, company.id, pair.id);
    await assign(board.headers, company.id, pair.id);
    const before = link.frames.filter((f) => f.type === "run").length;
    link.send({ type: "claim", slots: 2 });
    await eventually(async () => link.frames.filter((f) => f.type === "run").length === before + 2);
  });

  it("rejects a maxConcurrentRuns that is not an integer from 1 to 16", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await seedAgent(company.id, { name: "Bounded" });
    for (const value of [0, 17, 1.5, "2"]) {
      const res = await call("PATCH", `/api/agents/${agent.id}`, {
        headers: board.headers,
        body: { runtimeConfig: { maxConcurrentRuns: value } },
      });
      expect(res.status, String(value)).toBe(400);
    }
  });
});

describe("agent status", () => {
  it("is running while a run runs, error after a failure, idle after a success", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await seedAgent(company.id, { name: "Status", adapterConfig: { command: "true" } });
    await invoke(board.headers, agent.id);
    const link = await runnerFor(board, company.id);
    const failing = await claimOne(link);
    expect(await agentStatus(agent.id)).toBe("running");
    link.send({ type: "finish", runId: failing.runId, exitCode: 1, timedOut: false, logFrames: 0 });
    await eventually(async () => (await agentStatus(agent.id)) === "error");
    await invoke(board.headers, agent.id);
    const passing = await claimOne(link);
    expect(await agentStatus(agent.id)).toBe("running");
    link.send({ type: "finish", runId: passing.runId, exitCode: 0, timedOut: false, logFrames: 0 });
    await eventually(async () => (await agentStatus(agent.id)) === "idle");
  });
});

describe("paused and archived companies", () => {
  /** An invoke refused with `reason`: 409 naming it, and the wake stored as a cancelled run with it. */
  async function expectRefusedInvoke(headers: Record<string, string>, agentId: string, reason: string) {
    const refused = await invoke(headers, agentId);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      code: "conflict",
      details: { errorReason: reason, run: { status: "cancelled", errorReason: reason } },
    });
    const runId = String(((refused.body.details as Json).run as Json).id);
    expect(await runRow(runId)).toMatchObject({ status: "cancelled", error_reason: reason });
  }

  /** An assignment is still made (201), and its wake is stored as a cancelled run with `reason`. */
  async function expectCancelledAssignmentWake(
    headers: Record<string, string>,
    companyId: string,
    agentId: string,
    reason: string,
  ) {
    const created = await call<Json>("POST", `/api/companies/${companyId}/issues`, {
      headers,
      body: { title: `Work ${crypto.randomUUID().slice(0, 6)}`, status: "todo", assigneeAgentId: agentId },
    });
    expect(created.status).toBe(201);
    const wakes = await env.DB.prepare("SELECT status, error_reason FROM heartbeat_runs WHERE issue_id = ?")
      .bind(String(created.body.id))
      .all<Json>();
    expect(wakes.results).toEqual([{ status: "cancelled", error_reason: reason }]);
  }

  const openRuns = async (agentId: string) =>
    (
      await env.DB.prepare(
        "SELECT count(*) AS n FROM heartbeat_runs WHERE agent_id = ? AND status IN ('queued', 'running')",
      )
        .bind(agentId)
        .first<Json>()
    )?.n;

  it("start no runs: a wake is recorded cancelled with the reason, and pausing cancels what was queued", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await seedAgent(company.id, { name: "Paused", adapterConfig: { command: "true" } });
    const queued = await invoke(board.headers, agent.id);
    expect(queued.status).toBe(202);
    const paused = await call("PATCH", `/api/companies/${company.id}`, {
      headers: board.headers,
      body: { status: "paused" },
    });
    expect(paused.status).toBe(200);
    expect(await runRow(String(queued.body.id))).toMatchObject({
      status: "cancelled",
      error_reason: "company_paused",
    });
    await expectRefusedInvoke(board.headers, agent.id, "company_paused");
    await expectCancelledAssignmentWake(board.headers, company.id, agent.id, "company_paused");

    const archived = await call("POST", `/api/companies/${company.id}/archive`, { headers: board.headers });
    expect(archived.status).toBe(200);
    await expectRefusedInvoke(board.headers, agent.id, "company_archived");
    await expectCancelledAssignmentWake(board.headers, company.id, agent.id, "company_archived");
    expect(await openRuns(agent.id)).toBe(0);
    // A runner of the company's owner is handed none of it.
    const link = await runnerFor(board, company.id);
    link.send({ type: "claim", slots: 4 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(link.frames.filter((f) => f.type === "run")).toEqual([]);
  });
});

describe("waitingForRunner", () => {
  it("is true for a queued run no connected runner serves, false once one connects", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await seedAgent(company.id, { name: "Waiting" });
    const invoked = await invoke(board.headers, agent.id);
    expect(invoked.body).toMatchObject({ status: "queued", waitingForRunner: true });
    const runId = String(invoked.body.id);
    const detail = async () =>
      (await call<Json>("GET", `/api/heartbeat-runs/${runId}`, { headers: board.headers })).body;
    expect(await detail()).toMatchObject({ waitingForRunner: true });
    const runner = await registerRunner(board, company.id);
    expect(await detail()).toMatchObject({ waitingForRunner: true }); // registered, not connected
    await openRunnerLink(runner.token);
    await eventually(async () => (await detail()).waitingForRunner === false);
    const listed = await call<Json[]>("GET", `/api/companies/${company.id}/heartbeat-runs`, {
      headers: board.headers,
    });
    expect(listed.body[0]).toMatchObject({ id: runId, waitingForRunner: false });
  });
});
