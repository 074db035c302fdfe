// Heartbeat runs in workerd: coalescing of duplicate wakes, the runner link (claim with the PLATFORM_*
// environment and a run-scoped key, log, finish, a failed run releasing what it held), refusal at
// claim time, and the run routes' 404 across companies. Runners are registered per company by its
// owner (runners.test.ts covers who may, and what they receive); heartbeat timers are in timers.test.ts.

import { SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { BRIDGE_TOKEN } from "../../fake-bridge";
import { call } from "../../helpers";
import { eventually } from "../../patience";
import { boardUser, seedAgent, seedCompany, seedIssue, seedTwoTenants } from "../helpers";
import { claimOne, dialRunner, runnerFor } from "../runner-link";

type Json = Record<string, unknown>;

/** Each test starts from an empty queue: the dispatcher hands out the oldest queued run of the file's D1. */
beforeEach(async () => {
  await env.DB.prepare(
    "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
  ).run();
});

const runRow = (id: string) =>
  env.DB.prepare("SELECT * FROM heartbeat_runs WHERE id = ?").bind(id).first<Json>();

async function mentionWake(headers: Record<string, string>, issueId: string, agentName: string) {
  const res = await call("POST", `/api/issues/${issueId}/comments`, {
    headers,
    body: { body: `@${agentName} look` },
  });
  expect(res.status).toBe(201);
}

describe("wakes", () => {
  it("coalesce: a second wake for the same agent and issue joins the queued run", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await seedAgent(company.id, { name: "Solo" });
    const issue = await seedIssue(company, { status: "todo" });
    await mentionWake(board.headers, issue.id, "Solo");
    await mentionWake(board.headers, issue.id, "Solo");
    const runs = await env.DB.prepare("SELECT status, coalesced_count FROM heartbeat_runs WHERE agent_id = ?")
      .bind(agent.id)
      .all<Json>();
    expect(runs.results).toEqual([{ status: "queued", coalesced_count: 1 }]);
  });

  it("lists one issue's runs with ?issueId, and none for an issue without any", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    await seedAgent(company.id, { name: "Lister" });
    const [first, second, quiet] = [
      await seedIssue(company, { status: "todo" }),
      await seedIssue(company, { status: "todo" }),
      await seedIssue(company, { status: "todo" }),
    ];
    await mentionWake(board.headers, first.id, "Lister");
    await mentionWake(board.headers, second.id, "Lister");
    const list = (issueId: string) =>
      call<Json[]>("GET", `/api/companies/${company.id}/heartbeat-runs?issueId=${issueId}`, {
        headers: board.headers,
      });
    expect((await list(first.id)).body.map((run) => run.issueId)).toEqual([first.id]);
    expect((await list(quiet.id)).body).toEqual([]);
    // By identifier too; one that names no issue lists nothing.
    expect((await list(second.identifier)).body.map((run) => run.issueId)).toEqual([second.id]);
    const unknown = await list("NOPE-1");
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual([]);
    expect((await list("")).status).toBe(400);
  });
});

describe("the runner link", () => {
  it("opens only with a live runner token: not the bridge token, not garbage, and the bridge has no runner link", async () => {
    expect((await dialRunner(BRIDGE_TOKEN)).status).toBe(401);
    expect((await dialRunner("swr_nope")).status).toBe(401);
    const bridgeRunner = await SELF.fetch("http://switchboard.test/bridge/v1/runner?bridge=x", {
      headers: { Upgrade: "websocket", Authorization: `Bearer ${BRIDGE_TOKEN}` },
    });
    expect(bridgeRunner.status).toBe(404);
  });

  it("hands out a queued run with its environment and a key valid only while it runs", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await seedAgent(company.id, {
      name: "Worker",
      adapterConfig: {
        command: "node",
        args: ["agent.mjs"],
        cwd: "/work",
        model: "m1",
        promptTemplate: "Hi {{agentName}} ({{wakeReason}})",
      },
    });
    const issue = await seedIssue(company, { status: "todo" });
    await mentionWake(board.headers, issue.id, "Worker");
    const link = await runnerFor(board, company.id);
    const run = await claimOne(link);
    expect(run).toMatchObject({
      agentId: agent.id,
      command: "node",
      args: ["agent.mjs"],
      prompt: "Hi Worker (issue_comment_mentioned)",
    });
    expect(run.env).toMatchObject({
      PLATFORM_RUN_ID: run.runId,
      PLATFORM_AGENT_ID: agent.id,
      PLATFORM_COMPANY_ID: company.id,
      PLATFORM_TASK_ID: issue.id,
      PLATFORM_WAKE_REASON: "issue_comment_mentioned",
      PLATFORM_MODEL: "m1",
    });
    expect(run.env.PLATFORM_WAKE_COMMENT_ID).toMatch(/^[0-9a-f-]{36}$/);
    expect(await runRow(run.runId)).toMatchObject({ status: "running", started_at: expect.any(Number) });

    const runKey = { Authorization: `Bearer ${run.env.PLATFORM_API_KEY}` };
    expect((await call("GET", "/api/agents/me", { headers: runKey })).status).toBe(200);
    const checkout = await call("POST", `/api/issues/${issue.id}/checkout`, {
      headers: runKey,
      body: { agentId: agent.id, expectedStatuses: ["todo"] },
    });
    expect(checkout.status).toBe(200);
    const held = await env.DB.prepare("SELECT checkout_run_id FROM issues WHERE id = ?")
      .bind(issue.id)
      .first<Json>();
    expect(held?.checkout_run_id).toBe(run.runId);

    link.send({ type: "log", runId: run.runId, seq: 0, stream: "stdout", text: "working\n" });
    link.send({ type: "finish", runId: run.runId, exitCode: 2, timedOut: false, logFrames: 1 });
    await eventually(async () => (await runRow(run.runId))?.status === "failed");
    expect(await runRow(run.runId)).toMatchObject({
      exit_code: 2,
      error_reason: "exit code 2",
      log_excerpt: "working\n",
    });
    // The run ends first, then gives back its issues (endRun): the release may lag by a moment.
    const issueOf = () => call<Json>("GET", `/api/issues/${issue.id}`, { headers: board.headers });
    await eventually(async () => (await issueOf()).body.status === "todo");
    expect((await issueOf()).body).toMatchObject({ status: "todo", assigneeAgentId: null });
    expect((await call("GET", "/api/agents/me", { headers: runKey })).status).toBe(401);
    const log = await call<{ chunks: Json[] }>("GET", `/api/heartbeat-runs/${run.runId}/log`, {
      headers: board.headers,
    });
    expect(log.body.chunks).toEqual([
      expect.objectContaining({ seq: 0, stream: "stdout", text: "working\n" }),
    ]);
  });

  it("succeeds on exit 0 with usage and cost, and fails the runs of a link that closes", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    await seedAgent(company.id, { name: "Finisher", adapterConfig: { command: "true" } });
    const first = await seedIssue(company, { status: "todo" });
    const second = await seedIssue(company, { status: "todo" });
    await mentionWake(board.headers, first.id, "Finisher");
    const link = await runnerFor(board, company.id);
    const ok = await claimOne(link);
    link.send({
      type: "finish",
      runId: ok.runId,
      exitCode: 0,
      timedOut: false,
      logFrames: 0,
      usage: { inputTokens: 5 },
      costCents: 3,
    });
    await eventually(async () => (await runRow(ok.runId))?.status === "succeeded");
    const detail = await call<Json>("GET", `/api/heartbeat-runs/${ok.runId}`, { headers: board.headers });
    expect(detail.body).toMatchObject({
      status: "succeeded",
      exitCode: 0,
      costCents: 3,
      usage: { inputTokens: 5 },
    });
    const charged = await env.DB.prepare(
      "SELECT e.cost_cents, e.input_tokens, a.spent_monthly_cents FROM cost_events e JOIN agents a ON a.id = e.agent_id WHERE e.heartbeat_run_id = ?",
    )
      .bind(ok.runId)
      .first<Json>();
    expect(charged).toEqual({ cost_cents: 3, input_tokens: 5, spent_monthly_cents: 3 });

    await mentionWake(board.headers, second.id, "Finisher");
    const lost = await claimOne(link);
    link.socket.close(1000, "bye");
    await eventually(async () => (await runRow(lost.runId))?.status === "failed");
    expect((await runRow(lost.runId))?.error_reason).toBe("runner_lost");
  });

  it("keeps every line of output in order, however fast the frames arrive, and the finish after them", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    await seedAgent(company.id, { name: "Chatty", adapterConfig: { command: "true" } });
    const issue = await seedIssue(company, { status: "todo" });
    await mentionWake(board.headers, issue.id, "Chatty");
    const link = await runnerFor(board, company.id);
    const run = await claimOne(link);
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i}\n`);
    for (const [seq, text] of lines.entries())
      link.send({ type: "log", runId: run.runId, seq, stream: "stdout", text });
    link.send({ type: "finish", runId: run.runId, exitCode: 0, timedOut: false, logFrames: lines.length });
    await eventually(async () => (await runRow(run.runId))?.status === "succeeded");
    expect((await runRow(run.runId))?.log_excerpt).toBe(lines.join(""));
  });

  it("holds a finish whose output is still missing, and applies it after the grace period", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    await seedAgent(company.id, { name: "Lossy", adapterConfig: { command: "true" } });
    const issue = await seedIssue(company, { status: "todo" });
    await mentionWake(board.headers, issue.id, "Lossy");
    const link = await runnerFor(board, company.id);
    const run = await claimOne(link);
    link.send({ type: "log", runId: run.runId, seq: 0, stream: "stdout", text: "first\n" });
    link.send({ type: "finish", runId: run.runId, exitCode: 0, timedOut: false, logFrames: 2 });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await runRow(run.runId))?.status).toBe("running"); // waiting for frame 1
    await eventually(async () => (await runRow(run.runId))?.status === "succeeded");
  });

  it("refuses at claim time a run whose agent was paused after it was queued", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await seedAgent(company.id, { name: "Sleeper", adapterConfig: { command: "true" } });
    const issue = await seedIssue(company, { status: "todo" });
    await mentionWake(board.headers, issue.id, "Sleeper");
    await env.DB.prepare("UPDATE agents SET status = 'paused' WHERE id = ?").bind(agent.id).run();
    const link = await runnerFor(board, company.id);
    link.send({ type: "claim", slots: 1 });
    await eventually(async () => {
      const row = await env.DB.prepare("SELECT status, error_reason FROM heartbeat_runs WHERE agent_id = ?")
        .bind(agent.id)
        .first<Json>();
      return row?.status === "cancelled" && row.error_reason === "agent_paused";
    });
    expect(link.frames.filter((f) => f.type === "run")).toEqual([]);
  });

  it("fails a run whose adapter has no command, without handing it out", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await seedAgent(company.id, { name: "Commandless", adapterConfig: { cwd: "/tmp" } });
    const issue = await seedIssue(company, { status: "todo" });
    await mentionWake(board.headers, issue.id, "Commandless");
    const link = await runnerFor(board, company.id);
    link.send({ type: "claim", slots: 1 });
    await eventually(async () => {
      const row = await env.DB.prepare("SELECT status, error_reason FROM heartbeat_runs WHERE agent_id = ?")
        .bind(agent.id)
        .first<Json>();
      return row?.status === "failed" && String(row.error_reason).includes("adapterConfig.command");
    });
  });
});

describe("run routes", () => {
  it("answer 404 for another company's run and list only the caller's company", async () => {
    const { owner, company, agent, outsider } = await seedTwoTenants();
    const invoked = await call<Json>("POST", `/api/agents/${agent.id}/heartbeat/invoke`, {
      headers: owner.headers,
    });
    expect(invoked.status).toBe(202);
    const runId = String(invoked.body.id);
    expect((await call("GET", `/api/heartbeat-runs/${runId}`, { headers: owner.headers })).status).toBe(200);
    expect((await call("GET", `/api/heartbeat-runs/${runId}`, { headers: outsider.headers })).status).toBe(
      404,
    );
    expect(
      (await call("GET", `/api/heartbeat-runs/${runId}/log`, { headers: outsider.headers })).status,
    ).toBe(404);
    const listed = await call<Json[]>("GET", `/api/companies/${company.id}/heartbeat-runs?status=queued`, {
      headers: owner.headers,
    });
    expect(listed.body.map((run) => run.id)).toContain(runId);
    expect(
      (await call("GET", `/api/companies/${company.id}/heartbeat-runs`, { headers: outsider.headers }))
        .status,
    ).toBe(404);
  });
});

describe("assignment wakes", () => {
  it("wake an agent given actionable work by someone else, once, and respect wakeOnDemand: false", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await seedAgent(company.id, { name: "Assignee" });
    const quiet = await seedAgent(company.id, { name: "Quiet" });
    await env.DB.prepare("UPDATE agents SET runtime_config = ? WHERE id = ?")
      .bind(JSON.stringify({ heartbeat: { enabled: false, wakeOnDemand: false } }), quiet.id)
      .run();
    const runsOf = async (agentId: string) =>
      (
        await env.DB.prepare(
          "SELECT status, invocation_source, wake_reason, issue_id, error_reason FROM heartbeat_runs WHERE agent_id = ? ORDER BY created_at",
        )
          .bind(agentId)
          .all<Json>()
      ).results;
    const created = await call<Json>("POST", `/api/companies/${company.id}/issues`, {
      headers: board.headers,
      body: { title: "Assigned at birth", assigneeAgentId: agent.id },
    });
    expect(created.status).toBe(201);
    expect(await runsOf(agent.id)).toEqual([
      {
        status: "queued",
        invocation_source: "assignment",
        wake_reason: "issue_assigned",
        issue_id: created.body.id,
        error_reason: null,
      },
    ]);
    const backlog = await seedIssue(company, { status: "backlog" });
    const planned = await call("PATCH", `/api/issues/${backlog.id}`, {
      headers: board.headers,
      body: { assigneeAgentId: agent.id },
    });
    expect(planned.status).toBe(200);
    expect(await runsOf(agent.id)).toHaveLength(1); // backlog: planning, no wake
    const own = await seedIssue(company, { status: "todo" });
    const self = await call("PATCH", `/api/issues/${own.id}`, {
      headers: agent.headers,
      body: { assigneeAgentId: agent.id },
    });
    expect(self.status).toBe(200);
    expect(await runsOf(agent.id)).toHaveLength(1); // it assigned itself
    const handed = await call("PATCH", `/api/issues/${own.id}`, {
      headers: board.headers,
      body: { assigneeAgentId: quiet.id },
    });
    expect(handed.status).toBe(200);
    expect(await runsOf(quiet.id)).toEqual([
      expect.objectContaining({ status: "cancelled", error_reason: "agent_wake_on_demand_disabled" }),
    ]);
  });
});
