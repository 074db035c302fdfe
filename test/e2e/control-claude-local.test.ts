// claude_local end to end, with the real Claude Code CLI (pinned, scripts/ensure-agent-clis.mjs) and
// a local fake Anthropic Messages API as the only far end: a mention queues a run, a runner the
// company's owner registered starts `claude` (found on the runner's PATH), the fake model has it run a
// shell command that checks the issue out, comments and sets it done with curl through our API (the
// run's PLATFORM_API_URL and run-scoped key), and the run succeeds with its transcript, cost and
// tokens from the CLI's result event. The model saw the agent's instructions and the protocol; a
// second wake on the issue resumes the same CLI session (the model sees the earlier turns) and its
// cost pauses the agent at its budget, with no PLATFORM_USAGE line anywhere. A CLI failing after
// checkout, or hanging, ends the run with a readable reason and releases the issue.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentCli } from "../support/agent-clis.ts";
import { type ApiClient, adminClient, eventually } from "../support/api.ts";
import {
  type FakeAnthropic,
  type MessagesRequest,
  type Reply,
  requestText,
  startFakeAnthropic,
  toolResults,
} from "../support/fake-models/anthropic.ts";
import { type RunnerProcess, startRunnerProcess } from "../support/runner-process.ts";
import { type Stack, startStack } from "../support/stack.ts";

interface Run {
  id: string;
  status: string;
  errorReason: string | null;
  costCents: number;
  usage: Record<string, unknown> | null;
}
interface Issue {
  id: string;
  status: string;
  assigneeAgentId: string | null;
}
type Json = Record<string, unknown>;

const claude = agentCli("claude");
const scratch = mkdtempSync(path.join(tmpdir(), "claude-e2e-"));
const INSTRUCTIONS = path.join(scratch, "instructions.md");
writeFileSync(INSTRUCTIONS, "INSTRUCTIONS-MARKER: you keep the release notes.");
const suffix = () => Math.random().toString(36).slice(2, 6);

let stack: Stack;
let board: ApiClient;
let fake: FakeAnthropic;
let runner: RunnerProcess;
let companyId: string;

/** The shell command the model has the CLI run: the heartbeat's writes, through curl. */
const API_LOOP = [
  'H="Authorization: Bearer $PLATFORM_API_KEY"; J="Content-Type: application/json"',
  'curl -sf --retry 2 -X POST "$PLATFORM_API_URL/issues/$PLATFORM_TASK_ID/checkout" -H "$H" -H "$J" -d "{\\"agentId\\":\\"$PLATFORM_AGENT_ID\\",\\"expectedStatuses\\":[\\"todo\\"]}" >/dev/null',
  'curl -sf --retry 2 -X POST "$PLATFORM_API_URL/issues/$PLATFORM_TASK_ID/comments" -H "$H" -H "$J" -d \'{"body":"Picked up by Claude Code."}\' >/dev/null',
  'curl -sf --retry 2 -X PATCH "$PLATFORM_API_URL/issues/$PLATFORM_TASK_ID" -H "$H" -H "$J" -d \'{"status":"done","comment":"Done through the API."}\' >/dev/null',
  "echo API-LOOP-OK",
].join(" && ");
const CHECKOUT_ONLY = API_LOOP.split(" && ").slice(0, 2).join(" && ");

/** Each agent's part of the conversation, told apart by its name in the wake prompt. */
function script(request: MessagesRequest): Reply {
  const text = requestText(request);
  const answered = toolResults(request).length > 0;
  if (text.includes("Scribe")) {
    // A resumed session carries the first run's turns: the second wake only answers.
    if (text.includes("FIRST-RUN-DONE.")) return { text: "RESUMED: nothing more to do." };
    return answered
      ? { text: "FIRST-RUN-DONE." }
      : { toolUse: { name: "Bash", input: { command: API_LOOP } } };
  }
  if (text.includes("Breaker") && answered)
    return { error: { status: 400, type: "invalid_request_error", message: "FAKE-REFUSAL" } };
  if (text.includes("Sleeper") && answered) return { hang: true };
  return { toolUse: { name: "Bash", input: { command: CHECKOUT_ONLY } } };
}

beforeAll(async () => {
  fake = await startFakeAnthropic(script, { usage: { input_tokens: 50_000, output_tokens: 1_000 } });
  stack = await startStack({ env: { BRIDGE: "0", RUNNER: "0" } });
  board = await adminClient(stack.baseUrl);
  const company = await board.call<{ id: string }>("POST", "/api/companies", { name: `Claude ${suffix()}` });
  companyId = company.body.id;
  const registered = await board.call<{ token: string }>("POST", `/api/companies/${companyId}/runners`, {
    name: "claude-runner",
  });
  // `claude` is found on the runner's PATH, as on a machine where it was installed globally.
  runner = startRunnerProcess(stack.baseUrl, registered.body.token, {
    PATH: `${claude.binDir}:${process.env.PATH ?? ""}`,
    HOME: mkdtempSync(path.join(scratch, "home-")),
  });
});

afterAll(async () => {
  await runner?.kill("SIGTERM");
  await stack?.stop();
  await fake?.close();
});

async function claudeAgent(name: string, config: Json = {}): Promise<{ id: string; name: string }> {
  const created = await board.call<{ id: string; name: string }>(
    "POST",
    `/api/companies/${companyId}/agents`,
    {
      name,
      role: "engineer",
      adapterType: "claude_local",
      adapterConfig: {
        instructionsFilePath: INSTRUCTIONS,
        timeoutSec: 30,
        ...config,
        env: {
          ANTHROPIC_BASE_URL: fake.url,
          ANTHROPIC_API_KEY: "sk-ant-dummy",
          // This machine's runner runs as root: Claude skips permissions as root only in a sandbox.
          ...(process.getuid?.() === 0 ? { IS_SANDBOX: "1" } : {}),
        },
      },
    },
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

async function wake(issueId: string, agentName: string): Promise<void> {
  const posted = await board.call("POST", `/api/issues/${issueId}/comments`, {
    body: `@${agentName} please take this one.`,
  });
  expect(posted.status).toBe(201);
}

async function todoIssue(title: string): Promise<Issue> {
  const created = await board.call<Issue>("POST", `/api/companies/${companyId}/issues`, {
    title,
    status: "todo",
  });
  return created.body;
}

const ENDED = ["succeeded", "failed", "timed_out", "cancelled"];
async function endedRuns(agentId: string, count: number): Promise<Run[]> {
  return eventually(
    async () => {
      const runs = await board.call<Run[]>(
        "GET",
        `/api/companies/${companyId}/heartbeat-runs?agentId=${agentId}`,
      );
      const ended = runs.body.filter((run) => ENDED.includes(run.status));
      return ended.length >= count ? ended.reverse() : undefined;
    },
    60_000,
    `${count} run(s) of ${agentId} to end`,
  );
}

const events = async (runId: string) =>
  (await board.call<{ events: Json[] }>("GET", `/api/heartbeat-runs/${runId}/events`)).body.events;
const issue = async (id: string) => (await board.call<Issue>("GET", `/api/issues/${id}`)).body;

describe("claude_local with the real claude CLI", () => {
  it("mention → runner → claude → Bash → API: done, with transcript and cost; a second wake resumes and pauses at budget", async () => {
    const agent = await claudeAgent(`Scribe ${suffix()}`);
    const task = await todoIssue("Write the release notes");
    await wake(task.id, agent.name);
    const [first] = await endedRuns(agent.id, 1);
    const log = await board.call<{ chunks: Array<{ text: string }> }>(
      "GET",
      `/api/heartbeat-runs/${first?.id}/log`,
    );
    const raw = log.body.chunks.map((chunk) => chunk.text).join("");
    expect(first, raw).toMatchObject({ status: "succeeded", errorReason: null });
    expect(await issue(task.id)).toMatchObject({ status: "done", assigneeAgentId: agent.id });
    const comments = await board.call<Array<{ body: string; authorAgentId: string | null }>>(
      "GET",
      `/api/issues/${task.id}/comments`,
    );
    expect(comments.body.filter((c) => c.authorAgentId === agent.id).map((c) => c.body)).toEqual([
      "Picked up by Claude Code.",
      "Done through the API.",
    ]);

    // Cost and tokens: the CLI's result event, rounded up to cents; no PLATFORM_USAGE line exists.
    expect(raw).not.toContain("PLATFORM_USAGE");
    const result = JSON.parse(raw.split("\n").find((line) => line.includes('"type":"result"')) ?? "{}");
    expect(first?.costCents).toBe(Math.ceil(Number((result.total_cost_usd * 100).toFixed(6))));
    expect(first?.costCents).toBeGreaterThan(0);
    expect(first?.usage).toMatchObject({ provider: "anthropic", inputTokens: 100_000, outputTokens: 2_000 });

    const transcript = await events(first?.id ?? "");
    expect(transcript.map((event) => event.type)).toEqual([
      "init",
      "tool_call",
      "tool_result",
      "assistant",
      "result",
    ]);
    expect(transcript[1]).toMatchObject({ name: "Bash", input: expect.stringContaining("/checkout") });
    expect(transcript[2]).toMatchObject({ isError: false, output: expect.stringContaining("API-LOOP-OK") });
    const sessionId = transcript[0]?.sessionId;

    // What reached the model: the instructions and the protocol with this stack's API URL.
    const system = JSON.stringify(
      fake.requests.find((r) => requestText(r.body).includes(agent.name))?.body.system,
    );
    expect(system).toContain("INSTRUCTIONS-MARKER");
    expect(system).toContain(`GET ${stack.baseUrl}/api/agents/me`);

    // The budget: what is spent plus one cent, so the second run's cost reaches it.
    const spent = (await board.call<{ spentMonthlyCents: number }>("GET", `/api/agents/${agent.id}`)).body;
    await board.call("PATCH", `/api/agents/${agent.id}`, { budgetMonthlyCents: spent.spentMonthlyCents + 1 });
    await wake(task.id, agent.name);
    const [, second] = await endedRuns(agent.id, 2);
    expect(second?.status).toBe("succeeded");
    const resumed = await events(second?.id ?? "");
    expect(resumed.map((event) => event.type)).toEqual(["init", "assistant", "result"]);
    expect(resumed[0]).toMatchObject({ type: "init", sessionId });
    expect(resumed[1]).toMatchObject({ text: "RESUMED: nothing more to do." });
    const paused = await board.call<{ status: string; pauseReason: string | null }>(
      "GET",
      `/api/agents/${agent.id}`,
    );
    expect(paused.body).toMatchObject({ status: "paused", pauseReason: "budget" });
  });

  it("a CLI that fails after checking out, or hangs, ends the run with a readable reason and releases the issue", async () => {
    const breaker = await claudeAgent(`Breaker ${suffix()}`);
    const sleeper = await claudeAgent(`Sleeper ${suffix()}`, { timeoutSec: 4 });
    const [broken, hung] = [await todoIssue("Break"), await todoIssue("Hang")];
    await wake(broken.id, breaker.name);
    await wake(hung.id, sleeper.name);

    const [failed] = await endedRuns(breaker.id, 1);
    expect(failed).toMatchObject({ status: "failed" });
    expect(failed?.errorReason).toMatch(/^claude reported an error: .*FAKE-REFUSAL/);
    const [timedOut] = await endedRuns(sleeper.id, 1);
    expect(timedOut).toMatchObject({
      status: "timed_out",
      errorReason: "timeout: still running after 4s, the process group was stopped",
    });
    for (const id of [broken.id, hung.id])
      expect(await issue(id)).toMatchObject({ status: "todo", assigneeAgentId: null });
    expect((await events(failed?.id ?? "")).map((event) => event.type)).toContain("tool_result");
  });
});
