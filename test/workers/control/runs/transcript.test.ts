// What a runner's adapter reports beyond the raw log, through the real runner link: transcript events
// stored in order and served at GET /api/heartbeat-runs/:runId/events (the log still whole beside
// them), a finish held back until its events have landed, and the CLI session kept per agent and
// issue: handed to the next run for that issue, forgotten when the runner says the CLI rejected it.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { eventually } from "../../patience";
import { type BoardUser, boardUser, seedCompany, seedIssue } from "../helpers";
import { claimOne, type RunAssignment, runnerFor } from "../runner-link";

type Json = Record<string, unknown>;

beforeEach(async () => {
  await env.DB.prepare(
    "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
  ).run();
});

const runStatus = async (id: string) =>
  (await env.DB.prepare("SELECT status FROM heartbeat_runs WHERE id = ?").bind(id).first<Json>())?.status;

async function claudeAgent(board: BoardUser, companyId: string, name: string) {
  const created = await call<{ id: string }>("POST", `/api/companies/${companyId}/agents`, {
    headers: board.headers,
    body: { name, role: "engineer", adapterType: "claude_local", adapterConfig: {} },
  });
  expect(created.status).toBe(201);
  return created.body;
}

async function mention(board: BoardUser, issueId: string, name: string) {
  const res = await call("POST", `/api/issues/${issueId}/comments`, {
    headers: board.headers,
    body: { body: `@${name} go` },
  });
  expect(res.status).toBe(201);
}

const EVENTS = [
  { type: "init", sessionId: "sess-1", model: "claude-sonnet-4-5" },
  { type: "tool_call", id: "toolu_1", name: "Bash", input: '{"command":"ls"}' },
  { type: "tool_result", toolCallId: "toolu_1", isError: false, output: "README.md\n" },
  { type: "assistant", text: "Listed the files." },
  {
    type: "result",
    ok: true,
    text: "Listed the files.",
    costUsd: 0.12,
    inputTokens: 900,
    outputTokens: 40,
    turns: 2,
  },
];

describe("transcripts and sessions from the runner", () => {
  it("stores the events in order, serves them beside the raw log, and hands the session to the next wake", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await claudeAgent(board, company.id, "Scribe");
    const issue = await seedIssue(company, { status: "todo" });
    await mention(board, issue.id, "Scribe");
    const link = await runnerFor(board, company.id);
    const run = (await claimOne(link)) as unknown as Json & { runId: string };
    expect(run.session).toBeNull();

    // The finish first: it waits for the events it announces.
    link.send({
      type: "finish",
      runId: run.runId,
      exitCode: 0,
      timedOut: false,
      logFrames: 1,
      eventFrames: EVENTS.length,
      usage: { provider: "anthropic", model: "claude-sonnet-4-5", inputTokens: 900, outputTokens: 40 },
      costCents: 12,
      session: { id: "sess-1", cwd: "/work/scribe" },
    });
    link.send({ type: "log", runId: run.runId, seq: 0, stream: "stdout", text: '{"type":"result"}\n' });
    for (const [seq, event] of [...EVENTS].reverse().entries())
      link.send({ type: "event", runId: run.runId, seq: EVENTS.length - 1 - seq, event });
    await eventually(async () => (await runStatus(run.runId)) === "succeeded");

    const events = await call<{ events: Json[] }>("GET", `/api/heartbeat-runs/${run.runId}/events`, {
      headers: board.headers,
    });
    expect(events.status).toBe(200);
    expect(events.body.events.map((event) => [event.seq, event.type])).toEqual([
      [0, "init"],
      [1, "tool_call"],
      [2, "tool_result"],
      [3, "assistant"],
      [4, "result"],
    ]);
    expect(events.body.events[1]).toMatchObject({ name: "Bash", input: '{"command":"ls"}' });
    const log = await call<{ chunks: Json[] }>("GET", `/api/heartbeat-runs/${run.runId}/log`, {
      headers: board.headers,
    });
    expect(log.body.chunks).toMatchObject([{ text: '{"type":"result"}\n' }]);
    const detail = await call<Json>("GET", `/api/heartbeat-runs/${run.runId}`, { headers: board.headers });
    expect(detail.body).toMatchObject({ costCents: 12 });

    await mention(board, issue.id, "Scribe");
    const next = (await claimOne(link)) as unknown as Json & { runId: string };
    expect(next.session).toEqual({ id: "sess-1", cwd: "/work/scribe" });
    link.send({
      type: "finish",
      runId: next.runId,
      exitCode: 1,
      timedOut: false,
      logFrames: 0,
      session: null,
    });
    await eventually(async () => (await runStatus(next.runId)) === "failed");
    await mention(board, issue.id, "Scribe");
    const third = (await claimOne(link)) as unknown as Json;
    expect(third.session).toBeNull();
    expect(agent.id).toBeTruthy();
  });

  it("another company's board gets 404 for a run's events; a timed-out run keeps the runner's reason", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    await claudeAgent(board, company.id, "Sleeper");
    const issue = await seedIssue(company, { status: "todo" });
    await mention(board, issue.id, "Sleeper");
    const link = await runnerFor(board, company.id);
    const run = (await claimOne(link)) as unknown as { runId: string };
    link.send({
      type: "finish",
      runId: run.runId,
      exitCode: null,
      timedOut: true,
      logFrames: 0,
      error: "timeout: still running after 3s, the process group was stopped",
    });
    await eventually(async () => (await runStatus(run.runId)) === "timed_out");
    const row = await env.DB.prepare("SELECT error_reason FROM heartbeat_runs WHERE id = ?")
      .bind(run.runId)
      .first<Json>();
    expect(row?.error_reason).toBe("timeout: still running after 3s, the process group was stopped");
    const stranger = await boardUser();
    const res = await call("GET", `/api/heartbeat-runs/${run.runId}/events`, { headers: stranger.headers });
    expect(res.status).toBe(404);
  });

  it("heartbeat/invoke {issueId} (an identifier) wakes the agent on that issue and resumes its session there", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await claudeAgent(board, company.id, "Resumer");
    const issue = await seedIssue(company, { status: "todo" });
    const other = await seedIssue(await seedCompany(await boardUser()), { status: "todo" });
    await mention(board, issue.id, "Resumer");
    const link = await runnerFor(board, company.id);
    const first = await claimOne(link);
    link.send({
      type: "finish",
      runId: first.runId,
      exitCode: 0,
      timedOut: false,
      logFrames: 0,
      session: { id: "sess-9", cwd: "/work/resumer" },
    });
    await eventually(async () => (await runStatus(first.runId)) === "succeeded");

    const invoke = (body?: unknown) =>
      call<Json & { details?: Json }>("POST", `/api/agents/${agent.id}/heartbeat/invoke`, {
        headers: board.headers,
        ...(body === undefined ? {} : { body }),
      });
    // Another company's issue, or a made-up identifier, is no issue of this agent's company.
    for (const issueId of [other.identifier, other.id, "ZZZ-404"]) {
      const refused = await invoke({ issueId });
      expect(refused.status).toBe(422);
      expect(refused.body.details).toMatchObject({ field: "issueId" });
    }
    const invoked = await invoke({ issueId: issue.identifier.toLowerCase() });
    expect(invoked.status).toBe(202);
    expect(invoked.body).toMatchObject({ issueId: issue.id, wakeReason: "manual_invoke", status: "queued" });
    const resumed = (await claimOne(link)) as RunAssignment & { session?: unknown };
    expect(resumed.runId).toBe(invoked.body.id);
    expect(resumed.env.PLATFORM_TASK_ID).toBe(issue.id);
    expect(resumed.session).toEqual({ id: "sess-9", cwd: "/work/resumer" });
    link.send({ type: "finish", runId: resumed.runId, exitCode: 0, timedOut: false, logFrames: 0 });
    await eventually(async () => (await runStatus(resumed.runId)) === "succeeded");

    // Without a body it stays the plain manual wake: no issue, nothing to resume.
    const plain = await invoke();
    expect(plain.status).toBe(202);
    expect(plain.body.issueId).toBeNull();
    const fresh = (await claimOne(link)) as RunAssignment & { session?: unknown };
    expect(fresh.env.PLATFORM_TASK_ID).toBe("");
    expect(fresh.session).toBeNull();
  });

  it("a second invoke on the same issue joins the queued run, and both activity entries name that run", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await claudeAgent(board, company.id, "Joiner");
    const issue = await seedIssue(company, { status: "todo" });
    // No runner serves this company, so the first wake stays queued for the second to join.
    const invoke = () =>
      call<Json>("POST", `/api/agents/${agent.id}/heartbeat/invoke`, {
        headers: board.headers,
        body: { issueId: issue.identifier },
      });
    const first = await invoke();
    const second = await invoke();
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.body.id).toBe(first.body.id);
    const logged = await env.DB.prepare(
      "SELECT details FROM activity_log WHERE entity_id = ? AND action = 'agent.heartbeat_invoked' ORDER BY rowid",
    )
      .bind(agent.id)
      .all<{ details: string }>();
    const runIds = logged.results.map((row) => (JSON.parse(row.details) as Json).runId);
    expect(runIds).toEqual([first.body.id, first.body.id]);
  });
});
