// A run says which CLI session it used and whether it resumed an earlier one: the runner's finish
// reports the session the CLI ended in and `resumed`, and GET /api/heartbeat-runs/:runId and the
// company's run list show them as sessionId and resumed.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { eventually } from "../../patience";
import { type BoardUser, boardUser, seedCompany, seedIssue } from "../helpers";
import { claimOne, runnerFor } from "../runner-link";

type Json = Record<string, unknown>;

beforeEach(async () => {
  await env.DB.prepare(
    "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
  ).run();
});

async function mention(board: BoardUser, issueId: string, name: string) {
  const res = await call("POST", `/api/issues/${issueId}/comments`, {
    headers: board.headers,
    body: { body: `@${name} go` },
  });
  expect(res.status).toBe(201);
}

async function finished(board: BoardUser, runId: string): Promise<Json> {
  let detail: Json = {};
  await eventually(async () => {
    const res = await call<Json>("GET", `/api/heartbeat-runs/${runId}`, { headers: board.headers });
    detail = res.body;
    return res.body.status === "succeeded";
  });
  return detail;
}

describe("a run's CLI session", () => {
  it("shows the session a run ended in, and that the next run for the issue resumed it", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const created = await call<{ id: string }>("POST", `/api/companies/${company.id}/agents`, {
      headers: board.headers,
      body: { name: "Sessioner", role: "engineer", adapterType: "claude_local", adapterConfig: {} },
    });
    expect(created.status).toBe(201);
    const issue = await seedIssue(company, { status: "todo" });
    await mention(board, issue.id, "Sessioner");
    const link = await runnerFor(board, company.id);

    const first = (await claimOne(link)) as unknown as Json & { runId: string };
    const queued = await call<Json>("GET", `/api/heartbeat-runs/${first.runId}`, { headers: board.headers });
    expect(queued.body).toMatchObject({ sessionId: null, resumed: false });
    const session = { id: "sess-first", cwd: "/work/sessioner" };
    link.send({
      type: "finish",
      runId: first.runId,
      exitCode: 0,
      timedOut: false,
      logFrames: 0,
      session,
      resumed: false,
    });
    expect(await finished(board, first.runId)).toMatchObject({ sessionId: "sess-first", resumed: false });

    await mention(board, issue.id, "Sessioner");
    const second = (await claimOne(link)) as unknown as Json & { runId: string };
    expect(second.session).toEqual(session);
    link.send({
      type: "finish",
      runId: second.runId,
      exitCode: 0,
      timedOut: false,
      logFrames: 0,
      session,
      resumed: true,
    });
    expect(await finished(board, second.runId)).toMatchObject({ sessionId: "sess-first", resumed: true });

    const list = await call<Json[]>("GET", `/api/companies/${company.id}/heartbeat-runs`, {
      headers: board.headers,
    });
    expect(list.status).toBe(200);
    const byId = new Map(list.body.map((run) => [run.id, run]));
    expect(byId.get(first.runId)).toMatchObject({ sessionId: "sess-first", resumed: false });
    expect(byId.get(second.runId)).toMatchObject({ sessionId: "sess-first", resumed: true });
  });
});
