// codex_local with the real Codex CLI (pinned, installed by scripts/ensure-agent-clis.mjs), run by the
// runner's AgentProcess as a real child process against a local fake OpenAI Responses API: the model
// has the CLI run a shell command (its exec_command tool); the transcript, session id and tokens come
// from the CLI's own `exec --json` stream, the cost from the price table; the developer instructions
// carry the agent's instructions and the platform protocol; a second run resumes the thread (the
// model sees the earlier turns) and is charged only its own tokens; a session the CLI rejects starts
// afresh; a CLI that fails, hangs or prints garbage gives a readable reason.
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RunAssignment } from "../../../bridge/src/protocol/runner.ts";
import { PRICE_TABLE_VERSION } from "../../../bridge/src/runner/adapters/pricing.ts";
import { agentCli } from "../../support/agent-clis.ts";
import {
  callOutputs,
  type FakeOpenAI,
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

const codex = agentCli("codex");
// Not under /tmp: Codex refuses to put its helper links in a CODEX_HOME under a temporary directory.
mkdirSync(path.join(homedir(), ".cache"), { recursive: true });
const root = mkdtempSync(path.join(homedir(), ".cache", "codex-local-test-"));
let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const USAGE = { input_tokens: 100_000, cached_tokens: 20_000, output_tokens: 2_000 };

const assignment = (
  cwd: string,
  overrides: Partial<RunAssignment> = {},
  config: Record<string, unknown> = {},
) =>
  cliAssignment(
    root,
    {
      adapterType: "codex_local",
      command: "codex",
      env: { FAKE_OPENAI_KEY: "sk-dummy" },
      adapterConfig: {
        command: codex.bin,
        model: "gpt-5.5",
        provider: { baseUrl: fake?.url ?? "http://127.0.0.1:9/v1", envKey: "FAKE_OPENAI_KEY" },
      },
    },
    cwd,
    overrides,
    config,
  );

const { execute, freshCwd } = cliTestBed(root);
const shellThenText = (cmd: string, closing: string) => (request: Parameters<typeof requestText>[0]) =>
  callOutputs(request).length > 0
    ? { text: closing }
    : { call: { name: "exec_command", arguments: { cmd } } };

// A real CLI starts in 1–15 s depending on the machine's load (CI runs suites in parallel): generous bounds.
describe("codex_local with the real codex CLI", { timeout: 90_000 }, () => {
  it("runs a shell call in its cwd; transcript, session and tokens from its stream, cost from the price table", async () => {
    fake = await startFakeOpenAI(
      shellThenText("echo ran-$PLATFORM_RUN_ID > marker.txt && echo TOOL-OK", "All finished."),
      { usage: USAGE },
    );
    const cwd = freshCwd();
    const ran = await execute(assignment(cwd));
    const { outcome, events, stdout } = ran;

    expectMarkerWritten(ran, cwd);
    // Two requests of 100k input (20k cached) and 2k output at gpt-5.5 prices (per M: 5 input, 0.5
    // cached, 30 output): $0.94, 94 cents. (gpt-5.5: the one model Codex 0.169 knows that is offered
    // its classic tools, exec_command among them, rather than its code mode only.)
    expect(outcome.usage).toMatchObject({
      provider: "openai",
      model: "gpt-5.5",
      inputTokens: 160_000,
      cachedInputTokens: 40_000,
      outputTokens: 4_000,
      priceTable: PRICE_TABLE_VERSION,
    });
    expect(outcome.costCents).toBe(94);
    const thread = JSON.parse(stdout.split("\n")[0] ?? "{}") as { thread_id?: string };
    expect(outcome.session).toEqual({ id: thread.thread_id, cwd });

    // A model Codex knows: no "Model metadata … not found" error event.
    const kinds = events.map((event) => event.type);
    expect(kinds).toEqual(["init", "tool_call", "tool_result", "assistant", "result"]);
    const call = events.find((event) => event.type === "tool_call");
    expect(call).toMatchObject({ name: "command_execution", input: expect.stringContaining("marker.txt") });
    expect(events).toContainEqual(
      expect.objectContaining({ type: "tool_result", isError: false, output: "TOOL-OK\n" }),
    );
    expect(events).toContainEqual({ type: "assistant", text: "All finished." });
    expect(events.at(-1)).toMatchObject({
      type: "result",
      ok: true,
      inputTokens: 200_000,
      outputTokens: 4_000,
    });

    const first = fake.requests[0];
    expect(first?.body.model).toBe("gpt-5.5");
    expect(first?.headers.authorization).toBe("Bearer sk-dummy");
    expect(requestText(first?.body ?? { model: "", input: [] })).toContain("INSTRUCTIONS-MARKER");
    expect(requestText(first?.body ?? { model: "", input: [] })).toContain("PROTOCOL-MARKER");
    // The run's skill, listed to the model by name and description (the CLI loads its text on demand).
    expect(sawSkill(first?.body), JSON.stringify(first?.body)).toBe(true);
    expect(requestText(first?.body ?? { model: "", input: [] })).toContain("Do the task.");
    // Network extras off: no web search tool is offered to the model.
    expect(JSON.stringify(first?.body.tools)).not.toContain("web_search");
  });

  it("a second run resumes the thread, charged only its own tokens; a rejected session or one from another folder starts afresh", async () => {
    fake = await startFakeOpenAI(
      (request) =>
        requestText(request).includes("second wake") ? { text: "Second answer." } : { text: "FIRST-ANSWER." },
      { usage: USAGE },
    );
    const cwd = freshCwd();
    const { second, session } = await firstAndResumedRuns(execute, assignment, cwd);
    expect(requestText(fake.requests.at(-1)?.body ?? { model: "", input: [] })).toContain("FIRST-ANSWER.");
    // Codex reports the thread's running total (200k); the run is charged its one request.
    expect(second.outcome.usage).toMatchObject({
      inputTokens: 80_000,
      cachedInputTokens: 20_000,
      outputTokens: 2_000,
    });
    expect(second.outcome.costCents).toBe(47);

    const fresh = await rejectedSessionRun(execute, assignment, cwd, "0b6f6a52-4c1e-4d39-9c8e-0d5a2d1f0e11");
    expect(fresh.system).toMatch(/codex rejected the session it was to resume \(.*no rollout found/);

    // A thread made in another folder is not handed over: the run starts a fresh one. Codex itself
    // would resume it there (its threads are not kept per folder), but the turns are about another
    // checkout's files.
    const elsewhere = await execute(assignment(freshCwd(), { session }));
    expect(elsewhere.system).toContain(`was made in ${cwd}`);
    expect(elsewhere.outcome.session?.id).not.toBe(session.id);
    const other = freshCwd();
    const told = await execute(assignment(other, { session: { id: session.id, cwd: other } }));
    expect(told.outcome.error, told.stderr).toBeUndefined();
    expect(told.outcome.session).toEqual({ id: session.id, cwd: other });
  });

  it("sandbox workspace-write reaches the CLI: the cwd is writable, other folders and the network are not", async () => {
    let modelUrl = "";
    fake = await startFakeOpenAI((request) =>
      shellThenText(
        "echo ran-$PLATFORM_RUN_ID > marker.txt; echo x > ../outside.txt; " +
          `curl -s -m 5 ${modelUrl}/models >/dev/null; echo curl-exit=$?`,
        "All finished.",
      )(request),
    );
    modelUrl = fake.url;
    const cwd = freshCwd();
    const ran = await execute(assignment(cwd, {}, { sandbox: "workspace-write" }));
    expectMarkerWritten(ran, cwd);
    const result = ran.events.find((event) => event.type === "tool_result");
    // The sandbox's own refusals: a read-only file system outside the cwd, no connection (curl 7).
    expect(result).toMatchObject({
      output: expect.stringContaining("../outside.txt: Read-only file system"),
    });
    expect(result).toMatchObject({ output: expect.stringContaining("curl-exit=7") });
    expect(existsSync(path.join(cwd, "..", "outside.txt"))).toBe(false);
    // Codex tells the model the mode it runs in.
    const sent = requestText(fake.requests[0]?.body ?? { model: "", input: [] });
    expect(sent).toContain("`sandbox_mode` is `workspace-write`");
    expect(sent).toContain("Approval policy is currently never");
  });

  it("an API error the CLI reports fails the run with its words", async () => {
    fake = await startFakeOpenAI(() => ({
      error: { status: 400, message: "FAKE-REFUSAL: prompt too long" },
    }));
    const { outcome } = await execute(assignment(freshCwd()));
    expect(outcome.exitCode).not.toBe(0);
    expect(outcome.error).toMatch(/^codex reported an error: .*FAKE-REFUSAL/);
  });

  it("a hung model is a timed-out run that says so", async () => {
    fake = await startFakeOpenAI(() => ({ hang: true }));
    const { outcome } = await execute(assignment(freshCwd(), { timeoutSec: 3 }));
    expect(outcome.timedOut).toBe(true);
    expect(outcome.error).toBe("timeout: still running after 3s, the process group was stopped");
  });

  it("a bad flag, garbage output, a missing CLI and a bad config each fail with a readable reason", async () => {
    const flag = await execute(assignment(freshCwd(), {}, { extraArgs: ["--no-such-flag"] }));
    expect(flag.outcome.error).toMatch(
      /^codex exited with code \d+: .*no-such-flag|^codex exited with code 2/,
    );

    const garbage = await execute(impostorRun(root, assignment, freshCwd(), "Hello, I am not Codex"));
    expect(garbage.outcome.error).toBe(
      "codex's output was not exec --json (first unreadable line: Hello, I am not Codex)",
    );

    const missing = await execute(missingCliRun(assignment, freshCwd()));
    expect(missing.outcome.error).toBe(
      "OpenAI Codex is not installed on this runner (`codex` is not on its PATH: /nonexistent): npm install -g @openai/codex; or set adapterConfig.command to its full path",
    );
    const bad = await execute(assignment(freshCwd(), {}, { sandbox: "yolo" }));
    expect(bad.outcome.error).toMatch(/^configuration: codex_local adapterConfig: sandbox: /);
  });
});
