// opencode_local with the real OpenCode CLI (pinned, installed by scripts/ensure-agent-clis.mjs), run by
// the runner's AgentProcess as a real child process against a local fake OpenAI Responses API (the
// `openai` provider's base URL pointed at it): the model has the CLI run a shell command (its bash
// tool); the transcript, session id, tokens and cost come from the CLI's own JSON events; the agent's
// instructions and the platform protocol reach the model (an `instructions` file); a second run resumes
// the session by its id (the model sees the earlier turns); a session the CLI rejects starts afresh; a
// CLI that fails, hangs or prints garbage gives a readable reason.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RunAssignment } from "../../../bridge/src/protocol/runner.ts";
import { agentCli } from "../../support/agent-clis.ts";
import {
  callOutputs,
  type FakeOpenAI,
  type Reply,
  requestText,
  startFakeOpenAI,
} from "../../support/fake-models/openai.ts";
import {
  cliAssignment,
  cliTestBed,
  expectMarkerWritten,
  firstAndResumedRuns,
  impostorRun,
  missingCliRun,
  rejectedSessionRun,
  sawSkill,
} from "./execute-run.ts";

const opencode = agentCli("opencode");
const root = mkdtempSync(path.join(tmpdir(), "opencode-local-test-"));
let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

// The CLI takes seconds to start (an in-process server, its database), many on a loaded machine.
const RUN_MS = 60_000;
const USAGE = { input_tokens: 100_000, cached_tokens: 20_000, output_tokens: 2_000 };

const assignment = (
  cwd: string,
  overrides: Partial<RunAssignment> = {},
  config: Record<string, unknown> = {},
) =>
  cliAssignment(
    root,
    {
      adapterType: "opencode_local",
      command: "opencode",
      // npm offline: on its first run in a HOME the CLI installs its plugin SDK from the registry.
      env: { OPENAI_API_KEY: "dummy-key", npm_config_offline: "true" },
      adapterConfig: {
        command: opencode.bin,
        model: "openai/gpt-5-mini",
        provider: { baseUrl: fake?.url ?? "http://127.0.0.1:9/v1" },
      },
    },
    cwd,
    overrides,
    config,
  );

const { execute, freshCwd } = cliTestBed(root);
const emptyRequest = { model: "", input: [] };

describe("opencode_local with the real opencode CLI", { timeout: RUN_MS }, () => {
  it("runs a shell call in its cwd; transcript, session, tokens and cost from its JSON events", async () => {
    // A shell command, then a file read that fails (a tool error), then the answer.
    const steps: Reply[] = [
      {
        call: {
          name: "bash",
          arguments: {
            command: "echo ran-$PLATFORM_RUN_ID > marker.txt && echo TOOL-OK",
            description: "Writes the marker",
          },
        },
      },
      { call: { name: "read", arguments: { filePath: "/nonexistent/notes.md" } } },
      { text: "All finished." },
    ];
    fake = await startFakeOpenAI(
      (request) => steps[callOutputs(request).length] ?? { text: "Too many steps." },
      { usage: USAGE },
    );
    const cwd = freshCwd();
    const ran = await execute(assignment(cwd));
    const { outcome, events, stdout } = ran;

    expectMarkerWritten(ran, cwd);
    // Three steps of 100k input (20k cached) and 2k output, priced by OpenCode at its gpt-5-mini prices
    // ($0.25 / $0.025 / $2 per million): $0.0735, 8 cents.
    expect(outcome.usage).toMatchObject({
      provider: "openai",
      model: "gpt-5-mini",
      inputTokens: 240_000,
      cachedInputTokens: 60_000,
      outputTokens: 6_000,
      costSource: "opencode",
    });
    expect(outcome.usage?.costUsd).toBeCloseTo(0.0735, 9);
    expect(outcome.costCents).toBe(8);
    const first = JSON.parse(stdout.split("\n")[0] ?? "{}") as { sessionID?: string };
    expect(first.sessionID).toMatch(/^ses_/);
    expect(outcome.session).toEqual({ id: first.sessionID, cwd });

    const kinds = events.map((event) => event.type);
    expect(kinds).toEqual([
      "init",
      "tool_call",
      "tool_result",
      "tool_call",
      "tool_result",
      "assistant",
      "result",
    ]);
    expect(events[0]).toEqual({ type: "init", sessionId: first.sessionID, model: "gpt-5-mini" });
    expect(events.find((event) => event.type === "tool_call")).toMatchObject({
      name: "bash",
      input: expect.stringContaining("marker.txt"),
    });
    expect(events).toContainEqual(
      expect.objectContaining({ type: "tool_result", isError: false, output: "TOOL-OK\n" }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "tool_result",
        isError: true,
        output: expect.stringContaining("/nonexistent/notes.md"),
      }),
    );
    expect(events).toContainEqual({ type: "assistant", text: "All finished." });
    expect(events.at(-1)).toMatchObject({
      type: "result",
      ok: true,
      inputTokens: 300_000,
      outputTokens: 6_000,
      turns: 3,
    });

    // Three model calls and none for a title (the run names its session).
    expect(fake.requests).toHaveLength(3);
    const request = fake.requests[0];
    expect(request?.body.model).toBe("gpt-5-mini");
    expect(request?.headers.authorization).toBe("Bearer dummy-key");
    const sent = requestText(request?.body ?? emptyRequest);
    expect(sent).toContain("INSTRUCTIONS-MARKER");
    expect(sent).toContain("PROTOCOL-MARKER");
    // The run's skill, listed to the model by name and description (the CLI loads its text on demand).
    expect(sawSkill(request?.body), JSON.stringify(request?.body)).toBe(true);
    // The prompt as written (on standard input: `run` would quote an argument with spaces).
    expect(sent).toContain('"text":"Do the task."');
  });

  it("a second run resumes the session by its id; a rejected session or one from another folder starts afresh", {
    timeout: 4 * RUN_MS,
  }, async () => {
    fake = await startFakeOpenAI((request) =>
      requestText(request).includes("second wake") ? { text: "Second answer." } : { text: "FIRST-ANSWER." },
    );
    const cwd = freshCwd();
    // The agent's own prices win over OpenCode's: one step of the fake's 100 in, 20 out at $2 / $8.
    const { second, session } = await firstAndResumedRuns(execute, assignment, cwd, {
      pricing: { input: 2, output: 8 },
    });
    expect(requestText(fake.requests.at(-1)?.body ?? emptyRequest)).toContain("FIRST-ANSWER.");
    expect(second.outcome.usage).toMatchObject({
      inputTokens: 100,
      outputTokens: 20,
      costUsd: 0.00036,
      pricesPerMTok: { input: 2, cachedInput: 2, output: 8 },
    });
    expect(second.outcome.costCents).toBe(1);

    const fresh = await rejectedSessionRun(execute, assignment, cwd, "ses_0000000000000000000000gone");
    expect(fresh.outcome.session?.id).toMatch(/^ses_/);
    expect(fresh.system).toContain(
      "opencode rejected the session it was to resume (Error: Session not found): starting a fresh session",
    );

    // A session made in another folder is not handed over (OpenCode 1.18.33 would resume it, answer, and
    // then neither print nor exit): the run starts a fresh one.
    const elsewhere = await execute(assignment(freshCwd(), { session }));
    expect(elsewhere.outcome.error, elsewhere.stderr).toBeUndefined();
    expect(elsewhere.system).toContain(`was made in ${cwd}`);
    expect(elsewhere.outcome.session?.id).toMatch(/^ses_/);
    expect(elsewhere.outcome.session?.id).not.toBe(session.id);
  });

  it("a run whose steps reach its budget is stopped mid-run with budget_exceeded", async () => {
    // A model that would call tools forever: each step costs 22 cents at the agent's prices
    // (100k input at $2, 2k output at $8 per million); the run may spend 30.
    fake = await startFakeOpenAI(
      () => ({ call: { name: "bash", arguments: { command: "echo again", description: "Loops" } } }),
      { usage: { input_tokens: 100_000, output_tokens: 2_000 } },
    );
    const began = Date.now();
    const { outcome, system } = await execute(
      assignment(freshCwd(), { budgetCents: 30, timeoutSec: 50 }, { pricing: { input: 2, output: 8 } }),
    );
    expect(outcome.timedOut).toBe(false);
    expect(outcome.error).toBe(
      "budget_exceeded: the run reached its budget of 30 cents, the process group was stopped",
    );
    expect(system).toContain("budget_exceeded: the run spent 44 cents of its 30: stopping");
    expect(outcome.costCents).toBe(44);
    // Stopped after its second step, long before the timeout (a third request may already be on its way).
    expect(fake.requests.length).toBeGreaterThanOrEqual(2);
    expect(fake.requests.length).toBeLessThanOrEqual(3);
    expect(Date.now() - began).toBeLessThan(45_000);
  });

  it("an API error the CLI reports fails the run with its words", async () => {
    fake = await startFakeOpenAI(() => ({
      error: { status: 400, message: "FAKE-REFUSAL: prompt too long" },
    }));
    const { outcome, events } = await execute(assignment(freshCwd()));
    expect(outcome.exitCode).toBe(1);
    expect(outcome.error).toBe("opencode reported an error: FAKE-REFUSAL: prompt too long");
    expect(events).toContainEqual({ type: "error", message: "FAKE-REFUSAL: prompt too long" });
  });

  it("a hung model is a timed-out run that says so", async () => {
    fake = await startFakeOpenAI(() => ({ hang: true }));
    const { outcome } = await execute(assignment(freshCwd(), { timeoutSec: 20 }));
    expect(fake.requests.length, "the CLI reached the model before the timeout").toBeGreaterThan(0);
    expect(outcome.timedOut).toBe(true);
    expect(outcome.error).toBe("timeout: still running after 20s, the process group was stopped");
  });

  it("a bad flag, garbage output, a missing CLI and a bad config each fail with a readable reason", async () => {
    // OpenCode answers an option it does not take with its usage alone, and exit code 1.
    const flag = await execute(assignment(freshCwd(), {}, { extraArgs: ["--no-such-flag"] }));
    expect(flag.stderr).toMatch(/^opencode run \[message\.\.\]/);
    expect(flag.outcome.error).toBe(
      "opencode exited with code 1: it printed its usage, refusing its arguments (an option in adapterConfig.extraArgs it does not take?)",
    );

    const garbage = await execute(impostorRun(root, assignment, freshCwd(), "Hello, I am not OpenCode"));
    expect(garbage.outcome.error).toBe(
      "opencode's output was not run --format json (first unreadable line: Hello, I am not OpenCode)",
    );

    const missing = await execute(missingCliRun(assignment, freshCwd()));
    expect(missing.outcome.error).toBe(
      "OpenCode is not installed on this runner (`opencode` is not on its PATH: /nonexistent): npm install -g opencode-ai; or set adapterConfig.command to its full path",
    );
    const bad = await execute(assignment(freshCwd(), {}, { model: "gpt-5-mini" }));
    expect(bad.outcome.error).toMatch(
      /^configuration: opencode_local adapterConfig: model: must be <provider>\/<model>/,
    );
  });
});
