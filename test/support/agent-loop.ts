// The whole agent loop for the CLI adapters' end-to-end suites (claude_local, codex_local,
// gemini_local, opencode_local): a stack, a company, a runner its owner registered with the pinned
// CLI on its PATH, and what every suite does and checks through the API (agents, wakes by mention, runs that end,
// their transcripts and logs, the issue and its comments, the budget). Each suite adds only its fake
// model's wire format and its CLI's own numbers.
//
// The scratch directory (the runner's work dir and the agents' HOME) is under ~/.cache, not /tmp:
// Codex refuses a CODEX_HOME under a temporary directory, and Gemini CLI ignores a system settings
// file (the run dir's settings.json) under a directory others may write to.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { PRICE_TABLE_VERSION } from "../../bridge/src/runner/adapters/pricing.ts";
import { agentCli } from "./agent-clis.ts";
import { type ApiClient, adminClient, eventually } from "./api.ts";
import { type RunnerProcess, startRunnerProcess } from "./runner-process.ts";
import { type Stack, startStack } from "./stack.ts";

export interface Run {
  id: string;
  status: string;
  errorReason: string | null;
  costCents: number;
  usage: Record<string, unknown> | null;
}
export interface Issue {
  id: string;
  status: string;
  assigneeAgentId: string | null;
}
export interface Agent {
  id: string;
  name: string;
}
export type Json = Record<string, unknown>;

/** The fake model API a suite started, with its vendor's way to read a request as text. */
export interface FakeModel<Body = unknown> {
  readonly requests: ReadonlyArray<{ body: Body }>;
  text(body: Body): string;
  close(): Promise<void>;
}

export const PICKED_UP = "Picked up by the agent.";
export const DONE = "Done through the API.";

/** The shell command the model has the CLI run: the heartbeat's writes, through curl. */
export const API_LOOP = [
  'H="Authorization: Bearer $PLATFORM_API_KEY"; J="Content-Type: application/json"',
  'curl -sf --retry 2 -X POST "$PLATFORM_API_URL/issues/$PLATFORM_TASK_ID/checkout" -H "$H" -H "$J" -d "{\\"agentId\\":\\"$PLATFORM_AGENT_ID\\",\\"expectedStatuses\\":[\\"todo\\"]}" >/dev/null',
  `curl -sf --retry 2 -X POST "$PLATFORM_API_URL/issues/$PLATFORM_TASK_ID/comments" -H "$H" -H "$J" -d '{"body":"${PICKED_UP}"}' >/dev/null`,
  `curl -sf --retry 2 -X PATCH "$PLATFORM_API_URL/issues/$PLATFORM_TASK_ID" -H "$H" -H "$J" -d '{"status":"done","comment":"${DONE}"}' >/dev/null`,
  "echo API-LOOP-OK",
].join(" && ");
/** Checks the issue out and nothing more: what a run that then fails has done. */
export const CHECKOUT_ONLY = API_LOOP.split(" && ").slice(0, 2).join(" && ");

/** What the model does next, in any vendor's wire format (each suite translates it). */
export type Move = { shell: string } | { text: string } | { fail: true } | { hang: true };

export const FIRST_RUN_DONE = "FIRST-RUN-DONE.";
export const RESUMED = "RESUMED: nothing more to do.";

/**
 * Each agent's part of the conversation, told apart by its name in what the model is sent (`text`);
 * `answered` says a tool result is back. Scribe does the whole loop, and on a resumed session (it
 * carries the first run's turns) only answers; Breaker checks out then meets an API error; Sleeper
 * checks out then the model hangs.
 */
export function nextMove(text: string, answered: boolean): Move {
  if (text.includes("Scribe")) {
    if (text.includes(FIRST_RUN_DONE)) return { text: RESUMED };
    return answered ? { text: FIRST_RUN_DONE } : { shell: API_LOOP };
  }
  if (text.includes("Breaker") && answered) return { fail: true };
  if (text.includes("Sleeper") && answered) return { hang: true };
  return { shell: CHECKOUT_ONLY };
}

const ENDED = ["succeeded", "failed", "timed_out", "cancelled"];
export const suffix = () => Math.random().toString(36).slice(2, 6);

export class AgentLoop {
  /** The agents' instructions file; its marker must reach the model. */
  readonly instructions: string;

  private constructor(
    readonly stack: Stack,
    readonly board: ApiClient,
    readonly companyId: string,
    private readonly runner: RunnerProcess,
    /** The loop's scratch directory (removed when it stops). */
    readonly scratch: string,
    private readonly fake: { close(): Promise<void> },
    /** The text of each request the fake model was sent, in order. */
    readonly sent: () => string[],
    /** Each request whole (tools and all), as JSON. */
    readonly sentWhole: () => string[],
  ) {
    this.instructions = path.join(scratch, "instructions.md");
    writeFileSync(this.instructions, "INSTRUCTIONS-MARKER: you keep the release notes.");
  }

  /**
   * A stack without bridge or runner, a company, and a runner of its own with `cli` on its PATH; the
   * loop closes `fake` when it stops.
   */
  static async start<Body>(cli: string, fake: FakeModel<Body>): Promise<AgentLoop> {
    try {
      return await AgentLoop.boot(cli, fake);
    } catch (error) {
      await fake.close();
      throw error;
    }
  }

  private static async boot<Body>(cli: string, fake: FakeModel<Body>): Promise<AgentLoop> {
    const { binDir } = agentCli(cli);
    mkdirSync(path.join(homedir(), ".cache"), { recursive: true });
    const scratch = mkdtempSync(path.join(homedir(), ".cache", `${cli}-e2e-`));
    const stack = await startStack({ env: { BRIDGE: "0", RUNNER: "0" } });
    const board = await adminClient(stack.baseUrl);
    const company = await board.call<{ id: string }>("POST", "/api/companies", {
      name: `${cli} ${suffix()}`,
    });
    const registered = await board.call<{ token: string }>(
      "POST",
      `/api/companies/${company.body.id}/runners`,
      { name: `${cli}-runner` },
    );
    // The CLI is found on the runner's PATH, as on a machine where it was installed globally.
    const home = path.join(scratch, "home");
    mkdirSync(home);
    const runner = startRunnerProcess(stack.baseUrl, registered.body.token, {
      PATH: `${binDir}:${process.env.PATH ?? ""}`,
      HOME: home,
      RUNNER_WORK_DIR: path.join(scratch, "work"),
    });
    const sent = () => fake.requests.map((request) => fake.text(request.body));
    const whole = () => fake.requests.map((request) => JSON.stringify(request.body));
    return new AgentLoop(stack, board, company.body.id, runner, scratch, fake, sent, whole);
  }

  async stop(): Promise<void> {
    await this.runner.kill("SIGTERM");
    await this.stack.stop();
    await this.fake.close();
    rmSync(this.scratch, { recursive: true, force: true });
  }

  /** An agent of `adapterType` with the instructions file, a 60 s timeout unless `config` says. */
  async agent(name: string, adapterType: string, config: Json): Promise<Agent> {
    const created = await this.board.call<Agent>("POST", `/api/companies/${this.companyId}/agents`, {
      name,
      role: "engineer",
      adapterType,
      adapterConfig: { instructionsFilePath: this.instructions, timeoutSec: 60, ...config },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body;
  }

  async todoIssue(title: string): Promise<Issue> {
    const created = await this.board.call<Issue>("POST", `/api/companies/${this.companyId}/issues`, {
      title,
      status: "todo",
    });
    return created.body;
  }

  /** Mentions the agent in a comment on the issue: a wake. */
  async wake(issueId: string, agentName: string): Promise<void> {
    const posted = await this.board.call("POST", `/api/issues/${issueId}/comments`, {
      body: `@${agentName} please take this one.`,
    });
    expect(posted.status).toBe(201);
  }

  /** The agent's runs, oldest first, once `count` of them have ended. */
  endedRuns(agentId: string, count: number): Promise<Run[]> {
    return eventually(
      async () => {
        const runs = await this.board.call<Run[]>(
          "GET",
          `/api/companies/${this.companyId}/heartbeat-runs?agentId=${agentId}`,
        );
        const ended = runs.body.filter((run) => ENDED.includes(run.status));
        return ended.length >= count ? ended.reverse() : undefined;
      },
      90_000,
      `${count} run(s) of ${agentId} to end`,
    );
  }

  async events(runId: string): Promise<Json[]> {
    return (await this.board.call<{ events: Json[] }>("GET", `/api/heartbeat-runs/${runId}/events`)).body
      .events;
  }

  /** The run's raw output, as the runner streamed it. */
  async log(runId: string): Promise<string> {
    const log = await this.board.call<{ chunks: Array<{ text: string }> }>(
      "GET",
      `/api/heartbeat-runs/${runId}/log`,
    );
    return log.body.chunks.map((chunk) => chunk.text).join("");
  }

  async issue(id: string): Promise<Issue> {
    return (await this.board.call<Issue>("GET", `/api/issues/${id}`)).body;
  }

  async agentState(
    id: string,
  ): Promise<{ status: string; pauseReason: string | null; spentMonthlyCents: number }> {
    return (
      await this.board.call<{ status: string; pauseReason: string | null; spentMonthlyCents: number }>(
        "GET",
        `/api/agents/${id}`,
      )
    ).body;
  }

  /** Bodies of the comments the agent wrote on the issue. */
  async commentsBy(issueId: string, agentId: string): Promise<string[]> {
    const comments = await this.board.call<Array<{ body: string; authorAgentId: string | null }>>(
      "GET",
      `/api/issues/${issueId}/comments`,
    );
    return comments.body.filter((c) => c.authorAgentId === agentId).map((c) => c.body);
  }
}

export interface FirstRun {
  run: Run;
  /** The run's raw output. */
  raw: string;
  transcript: Json[];
  /** The issue it did, where the second wake goes. */
  issueId: string;
}

/**
 * Wakes `agent` on a fresh issue titled `title` and checks what every heartbeat that works shows, by
 * whatever path the agent took (curl or MCP): its one run succeeded, and the issue is done by the
 * agent with both its comments. Returns the run, its raw log and the issue's id.
 */
export async function expectWokenToDone(
  loop: AgentLoop,
  agent: Agent,
  title: string,
): Promise<{ run: Run; raw: string; issueId: string }> {
  const task = await loop.todoIssue(title);
  await loop.wake(task.id, agent.name);
  const [run] = await loop.endedRuns(agent.id, 1);
  if (!run) throw new Error("no run");
  const raw = await loop.log(run.id);
  expect(run, raw).toMatchObject({ status: "succeeded", errorReason: null });
  expect(await loop.issue(task.id)).toMatchObject({ status: "done", assigneeAgentId: agent.id });
  expect(await loop.commentsBy(task.id, agent.id)).toEqual([PICKED_UP, DONE]);
  return { run, raw, issueId: task.id };
}

/**
 * Wakes `agent` (Scribe) on a fresh issue and checks the first run: it succeeded, the issue is done by
 * the agent with both comments, the transcript is one shell call (`toolName`) and an answer, and no
 * PLATFORM_USAGE line exists (cost and tokens come from the CLI's own output).
 */
export async function expectFullLoop(loop: AgentLoop, agent: Agent, toolName: string): Promise<FirstRun> {
  const { run, raw, issueId } = await expectWokenToDone(loop, agent, "Write the release notes");
  expect(raw).not.toContain("PLATFORM_USAGE");
  expect(run.costCents).toBeGreaterThan(0);

  const transcript = await loop.events(run.id);
  expect(
    transcript.map((event) => event.type),
    JSON.stringify(transcript),
  ).toEqual(["init", "tool_call", "tool_result", "assistant", "result"]);
  expect(transcript[1]).toMatchObject({ name: toolName, input: expect.stringContaining("/checkout") });
  expect(transcript[2]).toMatchObject({ isError: false, output: expect.stringContaining("API-LOOP-OK") });
  expect(transcript[3]).toMatchObject({ text: FIRST_RUN_DONE });
  expectBriefed(loop, agent);
  return { run, raw, transcript, issueId };
}

/**
 * What the model was sent on the agent's first request carries the instructions and the protocol,
 * and the CLI listed the platform skill (its name and description) among its skills.
 */
function expectBriefed(loop: AgentLoop, agent: Agent): void {
  const first = loop.sent().find((text) => text.includes(agent.name));
  expect(first).toContain("INSTRUCTIONS-MARKER");
  expect(first).toContain(`GET ${loop.stack.baseUrl}/api/agents/me`);
  const whole = loop.sentWhole().find((text) => text.includes(agent.name));
  // workers/llms/platform-skill.ts: its slug and the start of its description.
  expect(whole).toContain("switchboard");
  expect(whole).toContain("How you work on the Switchboard platform: the heartbeat protocol");
}

/**
 * Sets the agent's budget one cent above what it spent and wakes it again on its issue: the second
 * run resumes the first run's CLI session (the model answers from the earlier turns) and its cost
 * pauses the agent at its budget. A CLI that enforces the run's budget itself (`stopsAtCap`: Claude
 * Code's --max-budget-usd, handed the one cent left) ends the run there, cancelled with
 * budget_exceeded; the others report their cost at the end and succeed. Returns the second run.
 */
export async function expectResumedAtBudget(
  loop: AgentLoop,
  agent: Agent,
  first: FirstRun,
  stopsAtCap = false,
): Promise<Run> {
  const { spentMonthlyCents } = await loop.agentState(agent.id);
  expect(spentMonthlyCents).toBe(first.run.costCents);
  await loop.board.call("PATCH", `/api/agents/${agent.id}`, { budgetMonthlyCents: spentMonthlyCents + 1 });
  await loop.wake(first.issueId, agent.name);
  const [, second] = await loop.endedRuns(agent.id, 2);
  if (!second) throw new Error("no second run");
  expect(second, await loop.log(second.id)).toMatchObject({ status: stopsAtCap ? "cancelled" : "succeeded" });
  if (stopsAtCap) expect(second.errorReason).toMatch(/^budget_exceeded/);
  const resumed = await loop.events(second.id);
  // A CLI stopped at the cap reports it (result not ok), and the runner says why it stopped the run.
  const ends = stopsAtCap ? ["result", "system"] : ["result"];
  expect(
    resumed.map((event) => event.type),
    JSON.stringify(resumed),
  ).toEqual(["init", "assistant", ...ends]);
  if (stopsAtCap) expect(resumed[3]).toMatchObject({ message: expect.stringMatching(/^budget_exceeded/) });
  expect(resumed[0]).toMatchObject({ sessionId: first.transcript[0]?.sessionId });
  expect(resumed[1]).toMatchObject({ text: RESUMED });
  expect(await loop.agentState(agent.id)).toMatchObject({ status: "paused", pauseReason: "budget" });
  return second;
}

/**
 * Wakes `agent` (Breaker, Sleeper, an impostor) on a fresh issue: its run checks the issue out, then
 * ends as `status` with `reason`; its transcript has an `evidence` event (the checkout's tool result,
 * by default), and the platform released the run's checkout: the issue is back in todo with nobody
 * assigned.
 */
export async function expectReleased(
  loop: AgentLoop,
  agent: Agent,
  status: "failed" | "timed_out",
  reason: string | RegExp,
  evidence = "tool_result",
): Promise<Run> {
  const task = await loop.todoIssue(`Fail as ${agent.name}`);
  await loop.wake(task.id, agent.name);
  const [run] = await loop.endedRuns(agent.id, 1);
  if (!run) throw new Error("no run");
  expect(run, await loop.log(run.id)).toMatchObject({ status });
  expect(run.errorReason).toMatch(reason);
  expect((await loop.events(run.id)).map((event) => event.type)).toContain(evidence);
  expect(await loop.issue(task.id)).toMatchObject({ status: "todo", assigneeAgentId: null });
  const released = await loop.board.call<Array<{ actorType: string; details: Json }>>(
    "GET",
    `/api/companies/${loop.companyId}/activity?action=issue.released&entityId=${task.id}`,
  );
  expect(released.body).toEqual([
    expect.objectContaining({
      actorType: "system",
      details: expect.objectContaining({ runId: run.id, previousAssigneeAgentId: agent.id }),
    }),
  ]);
  return run;
}

/**
 * Tokens every answer of the fake model reports, for the CLIs whose cost is tokens × the price table
 * (Codex, Gemini CLI): large enough that the cost shows in whole cents.
 */
export const TOKENS_PER_REQUEST = { input: 100_000, cached: 20_000, output: 2_000 };

/**
 * The run's usage is `requests` answers' tokens (input counted without the cached part), priced with
 * the table's version, and its cost is `cents`.
 */
export function expectPriced(
  run: Run,
  priced: { provider: string; model: string; requests: number; cents: number },
): void {
  const { input, cached, output } = TOKENS_PER_REQUEST;
  expect(run.costCents).toBe(priced.cents);
  expect(run.usage).toMatchObject({
    provider: priced.provider,
    model: priced.model,
    inputTokens: (input - cached) * priced.requests,
    cachedInputTokens: cached * priced.requests,
    outputTokens: output * priced.requests,
    priceTable: PRICE_TABLE_VERSION,
  });
}
