// gemini_local end to end, with the real Gemini CLI (pinned, scripts/ensure-agent-clis.mjs) and a
// local fake Gemini API as the only far end (the agent's provider.baseUrl, GEMINI_API_KEY from its
// env): a mention queues a run, a runner the company's owner registered starts `gemini` (found on the
// runner's PATH), the fake model has it run a shell command (its run_shell_command tool) that checks
// the issue out, comments and sets it done with curl through our API, and the run succeeds with its
// transcript and tokens from the CLI's stream-json, its cost the tokens × the price table. The model
// saw the agent's instructions and the protocol (GEMINI.md memory); a second wake on the issue
// resumes the same Gemini session (the model sees the earlier turns), and its cost pauses the agent at
// its budget, with no PLATFORM_USAGE line anywhere. A model that hangs after the checkout times the
// run out, and an impostor `gemini` on the agent's PATH that prints garbage after the checkout fails
// it readably; both release the issue.
// An agent whose model uses the platform's MCP tools (the runner's mcpServers in the run's settings)
// does its heartbeat through /mcp alone.
// The runner's work dir is outside /tmp (test/support/agent-loop.ts): Gemini CLI ignores the run's
// settings file under a directory others may write to, and then looks for a login that is not there.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AgentLoop,
  expectFullLoop,
  expectPriced,
  expectReleased,
  expectResumedAtBudget,
  type Json,
  type Move,
  nextMove,
  suffix,
  TOKENS_PER_REQUEST,
} from "../support/agent-loop.ts";
import {
  type FakeGemini,
  functionResponses,
  type Reply,
  requestText,
  startFakeGemini,
} from "../support/fake-models/gemini.ts";
import { expectImpostorReleased } from "../support/impostor-cli.ts";
import { expectMcpLoop, MCP_AGENT, mcpMove } from "../support/mcp-loop.ts";

let loop: AgentLoop;
let fake: FakeGemini;

const { input, cached, output } = TOKENS_PER_REQUEST;
/** What every answer reports; at gemini-2.5-flash prices (per M: 0.3, 0.03 cached, 2.5 out) $0.0296. */
const USAGE = { promptTokenCount: input, cachedContentTokenCount: cached, candidatesTokenCount: output };

/**
 * The loop's next move as a Gemini API reply: a shell command is the CLI's run_shell_command tool,
 * an MCP call the tool Gemini CLI names mcp_<server>_<tool>.
 */
function reply(move: Move | NonNullable<ReturnType<typeof mcpMove>>): Reply {
  if ("mcp" in move) return { call: { name: `mcp_switchboard_${move.mcp.tool}`, args: move.mcp.input } };
  if ("shell" in move) return { call: { name: "run_shell_command", args: { command: move.shell } } };
  if ("fail" in move) return { error: { status: 400, message: "FAKE-REFUSAL: prompt too long" } };
  return move;
}

beforeAll(async () => {
  fake = await startFakeGemini(
    (request) => {
      const text = requestText(request);
      const answered = functionResponses(request).length;
      return reply(mcpMove(text, answered) ?? nextMove(text, answered > 0));
    },
    { usage: USAGE },
  );
  loop = await AgentLoop.start("gemini", { ...fake, text: requestText });
});

afterAll(() => loop?.stop());

const geminiAgent = (name: string, config: Json = {}) =>
  loop.agent(`${name} ${suffix()}`, "gemini_local", {
    model: "gemini-2.5-flash",
    provider: { baseUrl: fake.url },
    env: { GEMINI_API_KEY: "dummy-key" },
    ...config,
  });

describe("gemini_local with the real gemini CLI", () => {
  it("mention → runner → gemini → run_shell_command → API: done, cost from the price table; a second wake resumes and pauses at budget", async () => {
    const agent = await geminiAgent("Scribe");
    const first = await expectFullLoop(loop, agent, "run_shell_command");

    // Two requests at $0.0296: $0.0592, rounded up to 6 cents; tokens from the CLI's result event.
    expectPriced(first.run, { provider: "google", model: "gemini-2.5-flash", requests: 2, cents: 6 });
    expect(fake.requests[0]?.headers["x-goog-api-key"]).toBe("dummy-key");

    // Gemini CLI counts the run's own tokens when it resumes: one request, 3 cents.
    const second = await expectResumedAtBudget(loop, agent, first);
    expectPriced(second, { provider: "google", model: "gemini-2.5-flash", requests: 1, cents: 3 });
  });

  it("our agent uses /mcp: the runner's mcpServers settings let the model check out, comment and finish through MCP tools, no curl", async () => {
    const agent = await geminiAgent(MCP_AGENT);
    await expectMcpLoop(loop, agent, (tool) => `mcp_switchboard_${tool}`);
  });

  it("a hang after the checkout, or garbage from the CLI, ends the run readably and releases the issue", async () => {
    const sleeper = await geminiAgent("Sleeper", { timeoutSec: 15 });
    await Promise.all([
      expectReleased(
        loop,
        sleeper,
        "timed_out",
        "timeout: still running after 15s, the process group was stopped",
      ),
      expectImpostorReleased(
        loop,
        "gemini_local",
        "gemini",
        "gemini's output was not stream-json (first unreadable line: I checked it out, but I am not gemini.)",
      ),
    ]);
  });
});
