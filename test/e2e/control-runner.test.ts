// The agent runner end to end, against the real local stack: a comment mentioning a coder_local agent
// queues a heartbeat run, a runner the company's owner registered spawns the agent's configured command
// (a real child process, test/e2e/fixtures/heartbeat-agent.mjs) with its PLATFORM_* environment, the
// agent checks the issue out, comments and sets it done over HTTP, and the run ends succeeded with its
// log. Then a runner killed with SIGKILL mid-run: its run fails as runner_lost and the issue it held is
// released. (npm start's own local runner is off here: RUNNER=0.)
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually } from "../support/api.ts";
import { type RunnerProcess, startRunnerProcess } from "../support/runner-process.ts";
import { type Stack, startStack } from "../support/stack.ts";

const AGENT_SCRIPT = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "fixtures",
  "heartbeat-agent.mjs",
);

interface Run {
  id: string;
  status: string;
  issueId: string | null;
  wakeReason: string;
  errorReason: string | null;
  exitCode: number | null;
  costCents: number;
  logExcerpt?: string | null;
}
interface Issue {
  id: string;
  status: string;
  assigneeAgentId: string | null;
}

let stack: Stack;
let board: ApiClient;
let companyId: string;
const runners: RunnerProcess[] = [];

beforeAll(async () => {
  stack = await startStack({ env: { BRIDGE: "0", RUNNER: "0" } });
  board = await adminClient(stack.baseUrl);
  const company = await board.call<{ id: string }>("POST", "/api/companies", {
    name: `Runner ${Math.random().toString(36).slice(2, 8)}`,
  });
  expect(company.status).toBe(201);
  companyId = company.body.id;
});

afterAll(async () => {
  for (const runner of runners) await runner.kill("SIGTERM");
  await stack?.stop();
});

/** A runner the admin registers for the suite's company, started as its own process. */
async function startRunner(name: string): Promise<RunnerProcess> {
  const registered = await board.call<{ token: string }>("POST", `/api/companies/${companyId}/runners`, {
    name,
  });
  expect(registered.status).toBe(201);
  const runner = startRunnerProcess(stack.baseUrl, registered.body.token);
  runners.push(runner);
  return runner;
}

async function localAgent(name: string, args: string[]): Promise<{ id: string; name: string }> {
  const created = await board.call<{ id: string; name: string }>(
    "POST",
    `/api/companies/${companyId}/agents`,
    {
      name,
      role: "engineer",
      adapterType: "coder_local",
      adapterConfig: { command: process.execPath, args: [AGENT_SCRIPT, ...args], timeoutSec: 60 },
    },
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

async function todoIssue(title: string): Promise<Issue> {
  const created = await board.call<Issue>("POST", `/api/companies/${companyId}/issues`, {
    title,
    status: "todo",
  });
  expect(created.status).toBe(201);
  return created.body;
}

async function mention(issueId: string, agentName: string): Promise<void> {
  const posted = await board.call("POST", `/api/issues/${issueId}/comments`, {
    body: `@${agentName} please take this one.`,
  });
  expect(posted.status).toBe(201);
}

async function runFor(agentId: string, until: (run: Run) => boolean, what: string): Promise<Run> {
  return eventually(
    async () => {
      const runs = await board.call<Run[]>(
        "GET",
        `/api/companies/${companyId}/heartbeat-runs?agentId=${agentId}`,
      );
      return runs.body.find(until);
    },
    60_000,
    what,
  );
}

const issue = async (id: string) => (await board.call<Issue>("GET", `/api/issues/${id}`)).body;

describe("the local agent runner", () => {
  it("runs a mentioned agent's command: it checks out, comments and finishes; the run succeeds with its log", async () => {
    await startRunner("runner-a");
    const agent = await localAgent(`Builder ${Math.random().toString(36).slice(2, 6)}`, []);
    const task = await todoIssue("Write the release notes");
    await mention(task.id, agent.name);

    const done = await runFor(
      agent.id,
      (run) => run.status === "succeeded" || run.status === "failed",
      "the run to end",
    );
    const detail = await board.call<Run>("GET", `/api/heartbeat-runs/${done.id}`);
    expect(detail.body, detail.body.logExcerpt ?? "").toMatchObject({
      status: "succeeded",
      issueId: task.id,
      wakeReason: "issue_comment_mentioned",
      exitCode: 0,
      costCents: 7,
    });
    expect(detail.body.logExcerpt).toContain(`I am ${agent.name}`);
    const log = await board.call<{ chunks: Array<{ text: string }> }>(
      "GET",
      `/api/heartbeat-runs/${done.id}/log`,
    );
    const text = log.body.chunks.map((chunk) => chunk.text).join("");
    expect(text).toContain(`POST /api/issues/${task.id}/checkout → 200`);
    expect(text).toContain(`PATCH /api/issues/${task.id} → 200`);

    expect(await issue(task.id)).toMatchObject({ status: "done", assigneeAgentId: agent.id });
    const comments = await board.call<Array<{ body: string; authorAgentId: string | null }>>(
      "GET",
      `/api/issues/${task.id}/comments`,
    );
    const byAgent = comments.body.filter((comment) => comment.authorAgentId === agent.id).map((c) => c.body);
    expect(byAgent).toEqual([`Picked this up in run ${done.id}.`, "Done: the work is finished."]);
  });

  it("fails the run of a killed runner as runner_lost and releases the issue it held", async () => {
    const runner = await startRunner("runner-b");
    const agent = await localAgent(`Holder ${Math.random().toString(36).slice(2, 6)}`, ["hang"]);
    const task = await todoIssue("A task whose runner dies");
    await mention(task.id, agent.name);

    await eventually(
      async () => ((await issue(task.id)).status === "in_progress" ? true : undefined),
      60_000,
      "the agent to check the task out",
    );
    for (const other of runners.filter((r) => r !== runner)) await other.kill("SIGTERM");
    await runner.kill("SIGKILL");

    const lost = await runFor(agent.id, (run) => run.status === "failed", "the run to fail");
    expect(lost.errorReason).toBe("runner_lost");
    expect(await issue(task.id)).toMatchObject({ status: "todo", assigneeAgentId: null });

    const rival = await board.call<{ id: string }>("POST", `/api/companies/${companyId}/agents`, {
      name: `Rival ${Math.random().toString(36).slice(2, 6)}`,
      role: "engineer",
      adapterType: "coder_local",
    });
    const checkout = await board.call("POST", `/api/issues/${task.id}/checkout`, {
      agentId: rival.body.id,
      expectedStatuses: ["todo"],
    });
    expect(checkout.status, JSON.stringify(checkout.body)).toBe(200);
  });
});
