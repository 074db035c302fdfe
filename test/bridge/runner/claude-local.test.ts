// claude_local with the real Claude Code CLI (pinned, installed by scripts/ensure-agent-clis.mjs),
// run by the runner's AgentProcess as a real child process against a local fake Anthropic Messages
// API: the model has the CLI run a shell command (Bash tool); the transcript, session id, tokens and
// cost come from the CLI's own stream; the system prompt carries the agent's instructions and the
// platform protocol; a second run resumes the session (the model sees the earlier turns); a session
// the CLI rejects starts afresh; a CLI that fails, hangs, prints garbage or is missing gives a
// readable reason. Only loopback is reachable for the CLI: its non-essential traffic is off.
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RunAssignment, RunSession } from "../../../bridge/src/protocol/runner.ts";
import { costUsd, pricesFor, usdToCents } from "../../../bridge/src/runner/adapters/pricing.ts";
import { agentCli } from "../../support/agent-clis.ts";
import {
  type FakeAnthropic,
  requestText,
  type Script,
  startFakeAnthropic,
  toolResults,
} from "../../support/fake-models/anthropic.ts";
import {
  cliAssignment,
  cliTestBed,
  firstAndResumedRuns,
  impostorRun,
  missingCliRun,
  rejectedSessionRun,
  sawSkill,
} from "./execute-run.ts";

const claude = agentCli("claude");
const root = mkdtempSync(path.join(tmpdir(), "claude-local-test-"));
let fake: FakeAnthropic | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const isRoot = process.getuid?.() === 0;

/** A shell command through the Bash tool, then a closing sentence once its result is back. */
const toolThenText =
  (command: string, closing: string): Script =>
  (request) =>
    toolResults(request).length > 0 ? { text: closing } : { toolUse: { name: "Bash", input: { command } } };

const assignment = (
  cwd: string,
  overrides: Partial<RunAssignment> = {},
  config: Record<string, unknown> = {},
) =>
  cliAssignment(
    root,
    {
      adapterType: "claude_local",
      command: "claude",
      env: {
        ANTHROPIC_BASE_URL: fake?.url ?? "http://127.0.0.1:9",
        ANTHROPIC_API_KEY: "sk-ant-dummy",
        // The runner runs as root here: Claude allows skipping permissions as root only in a sandbox.
        ...(isRoot ? { IS_SANDBOX: "1" } : {}),
      },
      adapterConfig: { command: claude.bin, maxTurns: 5 },
    },
    cwd,
    overrides,
    config,
  );

const { execute, freshCwd } = cliTestBed(root);
/** The CLI's own `result` line from the raw output. */
const resultLine = (stdout: string) =>
  JSON.parse(stdout.split("\n").find((line) => line.includes('"type":"result"')) ?? "{}") as Record<
    string,
    unknown
  >;

// A real CLI starts in 1–15 s depending on the machine's load (CI runs suites in parallel): generous bounds.
describe("claude_local with the real claude CLI", { timeout: 90_000 }, () => {
  it("runs a tool call in its cwd; transcript, session, tokens and cost come from its stream", async () => {
    fake = await startFakeAnthropic(
      toolThenText("echo ran-$PLATFORM_RUN_ID > marker.txt && echo TOOL-OK", "All finished."),
      {
        usage: { input_tokens: 100_000, output_tokens: 2_000 },
      },
    );
    const cwd = freshCwd();
    const { outcome, events, stdout } = await execute(assignment(cwd, {}, { model: "claude-sonnet-4-5" }));

    expect(outcome, stdout).toMatchObject({ exitCode: 0, timedOut: false });
    expect(outcome.error).toBeUndefined();
    expect(readFileSync(path.join(cwd, "marker.txt"), "utf8").trim()).toBe("ran-run-under-test");
    const cli = resultLine(stdout);
    // Whole cents, rounded up from what the CLI says it cost.
    const cents = (cli.total_cost_usd as number) * 100;
    expect(cents).toBeGreaterThan(1);
    expect(outcome.costCents).toBeGreaterThanOrEqual(cents - 1e-6);
    expect(outcome.costCents).toBeLessThan(cents + 1);
    expect(outcome.usage).toMatchObject({ provider: "anthropic", inputTokens: 200_000, outputTokens: 4_000 });
    expect(outcome.session).toEqual({ id: cli.session_id, cwd });

    expect(events.map((event) => event.type)).toEqual([
      "init",
      "tool_call",
      "tool_result",
      "assistant",
      "result",
    ]);
    expect(events[1]).toMatchObject({ type: "tool_call", name: "Bash" });
    expect(events[1]?.type === "tool_call" && events[1].input).toContain("marker.txt");
    expect(events[2]).toMatchObject({
      type: "tool_result",
      isError: false,
      output: expect.stringContaining("TOOL-OK"),
    });
    expect(events[3]).toEqual({ type: "assistant", text: "All finished." });
    expect(events[4]).toMatchObject({ type: "result", ok: true, turns: 2 });

    // What the CLI sent the model: our model, our instructions and protocol in the system prompt.
    const first = fake.requests[0]?.body;
    expect(first?.model).toBe("claude-sonnet-4-5");
    expect(JSON.stringify(first?.system)).toContain("INSTRUCTIONS-MARKER");
    expect(JSON.stringify(first?.system)).toContain("PROTOCOL-MARKER");
    // The run's skill, listed to the model by name and description (the CLI loads its text on demand).
    expect(sawSkill(first), JSON.stringify(first)).toBe(true);
    expect(requestText(first ?? { model: "", messages: [] })).toContain("Do the task.");
  });

  it("a second run resumes the session: the model sees the earlier turns; a rejected session starts afresh", async () => {
    fake = await startFakeAnthropic((request) =>
      requestText(request).includes("second wake") ? { text: "Second answer." } : { text: "FIRST-ANSWER." },
    );
    const cwd = freshCwd();
    const { session } = await firstAndResumedRuns(execute, assignment, cwd);
    expect(session.cwd).toBe(cwd);
    const resumed = fake.requests.at(-1)?.body;
    expect(requestText(resumed ?? { model: "", messages: [] })).toContain("FIRST-ANSWER.");
    expect(resumed?.messages.length).toBeGreaterThanOrEqual(3);

    const fresh = await rejectedSessionRun(execute, assignment, cwd, "0b6f6a52-4c1e-4d39-9c8e-0d5a2d1f0e11");
    expect(fresh.outcome.session?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(fresh.system).toMatch(
      /claude rejected the session it was to resume \(No conversation found.*: starting a fresh session/,
    );
    expect(fresh.events.slice(0, 3)).toMatchObject([
      { type: "result", ok: false, text: expect.stringContaining("No conversation found") },
      { type: "system", message: expect.stringContaining("rejected") },
      { type: "init" },
    ]);

    const elsewhere = await execute(assignment(freshCwd(), { session }));
    expect(elsewhere.system).toContain(`was made in ${cwd}`);
    expect(elsewhere.outcome.session?.id).not.toBe(session.id);
  });

  it("each resumed run is charged its own calls, not the session's running total: the runs add up to what the model billed", async () => {
    const usage = { input_tokens: 100_000, output_tokens: 2_000 };
    // The first run makes two model calls (a tool call, then its answer); each later run one.
    fake = await startFakeAnthropic(
      (_request, index) =>
        index === 0 ? { toolUse: { name: "Bash", input: { command: "echo one" } } } : { text: "Done." },
      { usage },
    );
    const cwd = freshCwd();
    const runs: Array<{ costCents?: number; usage?: Record<string, unknown>; sessionTotal: number }> = [];
    const calls: number[] = [];
    let session: RunSession | null = null;
    for (const prompt of ["First wake.", "Second wake.", "Third wake."]) {
      const before = fake.requests.length;
      const run = await execute(assignment(cwd, { prompt, session }, { model: "claude-sonnet-4-5" }));
      expect(run.outcome.error, run.stderr).toBeUndefined();
      session = run.outcome.session ?? null;
      calls.push(fake.requests.length - before);
      runs.push({ ...run.outcome, sessionTotal: resultLine(run.stdout).total_cost_usd as number });
    }
    expect(calls).toEqual([2, 1, 1]);
    // What the fake billed per call at Claude's list price for the model ($3 in, $15 out per million).
    const perCall = costUsd(
      { input: usage.input_tokens, cached: 0, output: usage.output_tokens },
      pricesFor("anthropic", "claude-sonnet-4-5"),
    );
    expect(perCall).toBeCloseTo(0.33, 10);
    runs.forEach((run, index) => {
      const own = (calls[index] ?? 0) * perCall;
      expect(run.usage).toMatchObject({
        inputTokens: (calls[index] ?? 0) * usage.input_tokens,
        outputTokens: (calls[index] ?? 0) * usage.output_tokens,
      });
      expect(run.usage?.costUsd as number).toBeCloseTo(own, 9);
      expect(run.costCents).toBe(usdToCents(own));
    });
    // The CLI's total_cost_usd is the session's running total: the third run's is all four calls.
    expect(runs.map((run) => run.sessionTotal)).toEqual([
      expect.closeTo(2 * perCall, 9),
      expect.closeTo(3 * perCall, 9),
      expect.closeTo(4 * perCall, 9),
    ]);
    const charged = runs.reduce((sum, run) => sum + (run.costCents ?? 0), 0);
    expect(charged).toBe(usdToCents(4 * perCall));
  });

  it("the run's budget reaches the CLI: it stops itself at the cap mid-run and the run fails with budget_exceeded", async () => {
    // A model that would go on calling tools until --max-turns (8): $0.33 a call.
    fake = await startFakeAnthropic(() => ({ toolUse: { name: "Bash", input: { command: "echo again" } } }), {
      usage: { input_tokens: 100_000, output_tokens: 2_000 },
    });
    const { outcome, stdout } = await execute(
      assignment(freshCwd(), { budgetCents: 50 }, { model: "claude-sonnet-4-5", maxTurns: 8 }),
    );
    // The second call crossed 50 cents: the CLI stopped there, not at the eighth turn.
    expect(fake.requests).toHaveLength(2);
    expect(resultLine(stdout)).toMatchObject({ subtype: "error_max_budget_usd" });
    expect(outcome.error).toMatch(
      /^budget_exceeded: claude stopped at the run's budget \(Reached maximum budget \(\$0\.5\)\)/,
    );
    expect(outcome.costCents).toBe(66);
  });

  it("acceptEdits with allowedTools reaches the CLI: an allowed tool runs, another is refused in its words", async () => {
    const outside = path.join(root, "outside-the-cwd.txt");
    fake = await startFakeAnthropic((request) => {
      const results = toolResults(request);
      if (results.length > 0) return { text: `SAW: ${results[0]?.content}` };
      return requestText(request).includes("read the file")
        ? { toolUse: { name: "Write", input: { file_path: outside, content: "x" } } }
        : { toolUse: { name: "Bash", input: { command: "echo ran-$PLATFORM_RUN_ID > marker.txt" } } };
    });
    const config = { permissionMode: "acceptEdits", allowedTools: ["Bash"] };
    const cwd = freshCwd();
    const allowed = await execute(assignment(cwd, {}, config));
    expect(allowed.outcome.error, allowed.stderr).toBeUndefined();
    expect(readFileSync(path.join(cwd, "marker.txt"), "utf8").trim()).toBe("ran-run-under-test");
    // The CLI's own init line says which mode it runs in.
    expect(JSON.parse(allowed.stdout.split("\n")[0] ?? "{}")).toMatchObject({
      permissionMode: "acceptEdits",
    });

    // A write outside the working directory is not an edit acceptEdits allows, nor an allowed tool:
    // the CLI refuses it (nobody is there to ask) and says so in the tool's result.
    const refused = await execute(assignment(freshCwd(), { prompt: "Please read the file." }, config));
    expect(refused.outcome.error, refused.stderr).toBeUndefined();
    expect(refused.events).toContainEqual(
      expect.objectContaining({
        type: "tool_result",
        isError: true,
        output: expect.stringMatching(/^Claude requested permissions to write to .*outside-the-cwd\.txt/),
      }),
    );
    expect(existsSync(outside)).toBe(false);
    expect(resultLine(refused.stdout).permission_denials).toEqual([
      expect.objectContaining({ tool_name: "Write" }),
    ]);
  });

  it("the agent's own pricing prices Claude's tokens instead of the cost Claude reports", async () => {
    fake = await startFakeAnthropic(() => ({ text: "Priced." }), {
      usage: { input_tokens: 100_000, output_tokens: 2_000 },
    });
    const { outcome, events, stdout } = await execute(
      assignment(freshCwd(), {}, { pricing: { input: 1, output: 10 } }),
    );
    expect(outcome.error, stdout).toBeUndefined();
    // 100k input at $1 and 2k output at $10 per million: $0.12, 12 cents (Claude itself says more).
    const reported = resultLine(stdout).total_cost_usd as number;
    expect(reported).toBeGreaterThan(0.12);
    expect(outcome.usage).toMatchObject({
      provider: "anthropic",
      inputTokens: 100_000,
      outputTokens: 2_000,
      costUsd: 0.12,
      pricesPerMTok: { input: 1, cachedInput: 1, output: 10 },
      reportedCostUsd: reported,
    });
    expect(outcome.costCents).toBe(12);
    expect(events.at(-1)).toMatchObject({ type: "result", costUsd: 0.12 });
  });

  it("an API error the CLI reports fails the run with its words", async () => {
    fake = await startFakeAnthropic(() => ({
      error: { status: 400, type: "invalid_request_error", message: "FAKE-REFUSAL: prompt too long" },
    }));
    const { outcome } = await execute(assignment(freshCwd()));
    expect(outcome.exitCode).not.toBe(0);
    expect(outcome.error).toMatch(/^claude reported an error: .*FAKE-REFUSAL/);
  });

  it("a hung model is a timed-out run that says so, its whole group stopped", async () => {
    fake = await startFakeAnthropic(() => ({ hang: true }));
    const began = Date.now();
    const { outcome } = await execute(assignment(freshCwd(), { timeoutSec: 3 }));
    expect(outcome.timedOut).toBe(true);
    expect(outcome.error).toBe("timeout: still running after 3s, the process group was stopped");
    expect(Date.now() - began).toBeLessThan(12_000);
  });

  it("exits non-zero on a bad flag: the reason quotes the CLI", async () => {
    const { outcome } = await execute(assignment(freshCwd(), {}, { extraArgs: ["--no-such-flag"] }));
    expect(outcome.exitCode).not.toBe(0);
    expect(outcome.error).toMatch(/^claude exited with code \d+: .*no-such-flag/);
  });

  it("output that is not its stream-json fails the run even with exit 0", async () => {
    const { outcome, events } = await execute(
      impostorRun(root, assignment, freshCwd(), "Hello, I am not Claude"),
    );
    expect(outcome.exitCode).toBe(0);
    expect(outcome.error).toBe(
      "claude's output was not stream-json (first unreadable line: Hello, I am not Claude)",
    );
    expect(events).toContainEqual({
      type: "error",
      message: "not Claude Code stream-json output: Hello, I am not Claude",
    });
  });

  it("a missing CLI is named with how to install it; a bad config never starts", async () => {
    const missing = await execute(missingCliRun(assignment, freshCwd()));
    expect(missing.outcome.error).toBe(
      "Claude Code is not installed on this runner (`claude` is not on its PATH: /nonexistent): npm install -g @anthropic-ai/claude-code; or set adapterConfig.command to its full path",
    );
    const bad = await execute(assignment(freshCwd(), {}, { permissionMode: "yolo" }));
    expect(bad.outcome.error).toMatch(/^configuration: claude_local adapterConfig: permissionMode: /);
  });

  it.runIf(isRoot)(
    "as root without a sandbox, skipping permissions is refused with what to do instead",
    async () => {
      const run = assignment(freshCwd());
      const { IS_SANDBOX: _, ...env } = run.env as Record<string, string>;
      const { outcome } = await execute({ ...run, env });
      expect(outcome.error).toMatch(/^claude refuses permissionMode bypassPermissions .* RUNNER_RUN_AS/);
    },
  );
});
