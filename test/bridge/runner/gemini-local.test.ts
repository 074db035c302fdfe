// gemini_local with the real Gemini CLI (pinned, installed by scripts/ensure-agent-clis.mjs), run by the
// runner's AgentProcess as a real child process against a local fake Gemini API: the model has the CLI
// run a shell command (its run_shell_command tool); the transcript, session id and tokens come from the
// CLI's own stream-json output, the cost from the price table; the agent's instructions and the
// platform protocol reach the model (GEMINI.md memory); a second run resumes the session by its id
// (the model sees the earlier turns); a session the CLI rejects starts afresh; a CLI that fails, hangs
// or prints garbage gives a readable reason.
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RunAssignment } from "../../../bridge/src/protocol/runner.ts";
import { PRICE_TABLE_VERSION } from "../../../bridge/src/runner/adapters/pricing.ts";
import { agentCli } from "../../support/agent-clis.ts";
import {
  type FakeGemini,
  functionResponses,
  type GenerateContentRequest,
  requestText,
  startFakeGemini,
} from "../../support/fake-models/gemini.ts";
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

const gemini = agentCli("gemini");
// Not under /tmp: the CLI ignores a system settings file under a directory others may write to.
mkdirSync(path.join(homedir(), ".cache"), { recursive: true });
const root = mkdtempSync(path.join(homedir(), ".cache", "gemini-local-test-"));
let fake: FakeGemini | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const USAGE = { promptTokenCount: 100_000, cachedContentTokenCount: 20_000, candidatesTokenCount: 2_000 };

const assignment = (
  cwd: string,
  overrides: Partial<RunAssignment> = {},
  config: Record<string, unknown> = {},
) =>
  cliAssignment(
    root,
    {
      adapterType: "gemini_local",
      command: "gemini",
      env: { GEMINI_API_KEY: "dummy-key" },
      adapterConfig: {
        command: gemini.bin,
        model: "gemini-2.5-flash",
        provider: { baseUrl: fake?.url ?? "http://127.0.0.1:9" },
      },
    },
    cwd,
    overrides,
    config,
  );

const { execute, freshCwd } = cliTestBed(root);
const emptyRequest = { contents: [] };
/** The names of the functions the CLI declared to the model. */
const declaredTools = (request: GenerateContentRequest | undefined): string[] =>
  (request?.tools ?? []).flatMap((tool) =>
    Array.isArray(tool.functionDeclarations)
      ? (tool.functionDeclarations as Array<{ name: string }>).map((declaration) => declaration.name)
      : [],
  );

// A real CLI starts in 1–15 s depending on the machine's load (CI runs suites in parallel): generous bounds.
describe("gemini_local with the real gemini CLI", { timeout: 90_000 }, () => {
  it("runs a shell call in its cwd; transcript, session and tokens from its stream, cost from the price table", async () => {
    fake = await startFakeGemini(
      (request) =>
        functionResponses(request).length > 0
          ? { text: "All finished." }
          : {
              call: {
                name: "run_shell_command",
                args: { command: "echo ran-$PLATFORM_RUN_ID > marker.txt && echo TOOL-OK" },
              },
            },
      { usage: USAGE },
    );
    const cwd = freshCwd();
    const ran = await execute(assignment(cwd));
    const { outcome, events, stdout } = ran;

    expectMarkerWritten(ran, cwd);
    // Two requests of 100k input (20k cached) and 2k output at gemini-2.5-flash prices (per M: 0.3,
    // 0.03 cached, 2.5 output): $0.0592, 6 cents.
    expect(outcome.usage).toMatchObject({
      provider: "google",
      model: "gemini-2.5-flash",
      inputTokens: 160_000,
      cachedInputTokens: 40_000,
      outputTokens: 4_000,
      priceTable: PRICE_TABLE_VERSION,
    });
    expect(outcome.costCents).toBe(6);
    const init = JSON.parse(stdout.split("\n")[0] ?? "{}") as { session_id?: string };
    expect(outcome.session).toEqual({ id: init.session_id, cwd });

    const kinds = events.map((event) => event.type).filter((type) => type !== "error");
    expect(kinds).toEqual(["init", "tool_call", "tool_result", "assistant", "result"]);
    expect(events.find((event) => event.type === "tool_call")).toMatchObject({
      name: "run_shell_command",
      input: expect.stringContaining("marker.txt"),
    });
    expect(events).toContainEqual(
      expect.objectContaining({ type: "tool_result", isError: false, output: "TOOL-OK" }),
    );
    expect(events).toContainEqual({ type: "assistant", text: "All finished." });
    expect(events.at(-1)).toMatchObject({
      type: "result",
      ok: true,
      inputTokens: 200_000,
      outputTokens: 4_000,
    });

    const first = fake.requests[0];
    expect(first?.model).toBe("gemini-2.5-flash");
    expect(first?.headers["x-goog-api-key"]).toBe("dummy-key");
    const sent = requestText(first?.body ?? emptyRequest);
    expect(sent).toContain("INSTRUCTIONS-MARKER");
    expect(sent).toContain("PROTOCOL-MARKER");
    // The run's skill, listed to the model by name and description (the CLI loads its text on demand).
    expect(sawSkill(first?.body), JSON.stringify(first?.body)).toBe(true);
    expect(sent).toContain("Do the task.");
  });

  it("a second run resumes the session by its id; a rejected session or one from another folder starts afresh", {
    timeout: 180_000,
  }, async () => {
    fake = await startFakeGemini((request) =>
      requestText(request).includes("second wake") ? { text: "Second answer." } : { text: "FIRST-ANSWER." },
    );
    const cwd = freshCwd();
    const { second, session } = await firstAndResumedRuns(execute, assignment, cwd);
    expect(requestText(fake.requests.at(-1)?.body ?? emptyRequest)).toContain("FIRST-ANSWER.");
    // The CLI counts the run's own tokens: one request of the fake's default 100 in, 20 out.
    expect(second.outcome.usage).toMatchObject({ inputTokens: 100, outputTokens: 20 });

    const fresh = await rejectedSessionRun(execute, assignment, cwd, "0b6f6a52-4c1e-4d39-9c8e-0d5a2d1f0e11");
    expect(fresh.system).toMatch(/gemini rejected the session it was to resume \(Error resuming session/);

    // A session made in another folder: the runner does not hand it over, and the CLI itself would
    // not find it (its sessions are kept per project folder).
    const elsewhere = await execute(assignment(freshCwd(), { session }));
    expect(elsewhere.system).toContain(`was made in ${cwd}`);
    expect(elsewhere.outcome.session?.id).not.toBe(session.id);
    const other = freshCwd();
    const told = await execute(assignment(other, { session: { id: session.id, cwd: other } }));
    expect(told.system).toMatch(/gemini rejected the session .*No previous sessions found for this project/);
    expect(told.outcome.session?.id).not.toBe(session.id);
  });

  it("approvalMode auto_edit reaches the CLI: it offers no shell tool, and refuses a call to it in its words", async () => {
    const shell = { command: "echo ran > marker.txt && echo TOOL-OK" };
    fake = await startFakeGemini((request) => {
      const responses = functionResponses(request);
      return responses.length > 0
        ? { text: `SAW: ${responses[0]}` }
        : { call: { name: "run_shell_command", args: shell } };
    });
    const cwd = freshCwd();
    const { outcome, events } = await execute(assignment(cwd, {}, { approvalMode: "auto_edit" }));
    expect(outcome.error).toBeUndefined();
    // Nobody can approve a command in a run: the CLI leaves its shell tool out, keeps its edit tools.
    const offered = declaredTools(fake.requests[0]?.body);
    expect(offered).toContain("replace");
    expect(offered).not.toContain("run_shell_command");
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "tool_result",
        isError: true,
        output: expect.stringMatching(/^Tool "run_shell_command" not found/),
      }),
    );
    expect(existsSync(path.join(cwd, "marker.txt"))).toBe(false);
  });

  it("an API error the CLI reports fails the run with its words", async () => {
    fake = await startFakeGemini(() => ({
      error: { status: 400, message: "FAKE-REFUSAL: prompt too long" },
    }));
    const { outcome } = await execute(assignment(freshCwd()));
    expect(outcome.exitCode).not.toBe(0);
    expect(outcome.error).toMatch(/^gemini reported an error: .*FAKE-REFUSAL/);
  });

  it("a hung model is a timed-out run that says so", async () => {
    fake = await startFakeGemini(() => ({ hang: true }));
    const { outcome } = await execute(assignment(freshCwd(), { timeoutSec: 3 }));
    expect(outcome.timedOut).toBe(true);
    expect(outcome.error).toBe("timeout: still running after 3s, the process group was stopped");
  });

  it("a bad flag, garbage output, a missing CLI and a bad config each fail with a readable reason", async () => {
    const flag = await execute(assignment(freshCwd(), {}, { extraArgs: ["--no-such-flag"] }));
    expect(flag.outcome.exitCode).not.toBe(0);
    // `--no-such-flag` is, to its argument parser, the negation of a flag `such-flag`.
    expect(flag.outcome.error).toBe("gemini exited with code 1: Unknown arguments: such-flag, suchFlag");

    const garbage = await execute(impostorRun(root, assignment, freshCwd(), "Hello, I am not Gemini"));
    expect(garbage.outcome.error).toBe(
      "gemini's output was not stream-json (first unreadable line: Hello, I am not Gemini)",
    );

    const missing = await execute(missingCliRun(assignment, freshCwd()));
    expect(missing.outcome.error).toBe(
      "Gemini CLI is not installed on this runner (`gemini` is not on its PATH: /nonexistent): npm install -g @google/gemini-cli; or set adapterConfig.command to its full path",
    );
    const bad = await execute(assignment(freshCwd(), {}, { approvalMode: "always" }));
    expect(bad.outcome.error).toMatch(/^configuration: gemini_local adapterConfig: approvalMode: /);
  });
});
