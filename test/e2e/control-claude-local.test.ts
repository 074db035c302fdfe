// claude_local end to end, with the real Claude Code CLI (pinned, scripts/ensure-agent-clis.mjs) and
// a local fake Anthropic Messages API as the only far end: a mention queues a run, a runner the
// company's owner registered starts `claude` (found on the runner's PATH), the fake model has it run a
// shell command that checks the issue out, comments and sets it done with curl through our API (the
// run's PLATFORM_API_URL and run-scoped key), and the run succeeds with its transcript, cost and
// tokens from the CLI's result event. The model saw the agent's instructions and the protocol; a
// second wake on the issue resumes the same CLI session (the model sees the earlier turns) and its
// cost pauses the agent at its budget, with no PLATFORM_USAGE line anywhere. A CLI failing after
// checkout, hanging, or printing something that is not its stream (an impostor `claude` on the agent's
// PATH) ends the run with a readable reason and releases the issue. An agent whose model uses the
// platform's MCP tools (the runner's --mcp-config, the run's key) does its heartbeat through /mcp alone.
// The loop itself and its checks: test/support/agent-loop.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AgentLoop,
  expectFullLoop,
  expectReleased,
  expectResumedAtBudget,
  type Json,
  type Move,
  nextMove,
  suffix,
} from "../support/agent-loop.ts";
import {
  type FakeAnthropic,
  type MessagesRequest,
  type Reply,
  requestText,
  startFakeAnthropic,
  toolResultCount,
  toolResults,
} from "../support/fake-models/anthropic.ts";
import { expectImpostorReleased } from "../support/impostor-cli.ts";
import { expectMcpLoop, MCP_AGENT, mcpMove } from "../support/mcp-loop.ts";

let loop: AgentLoop;
let fake: FakeAnthropic;

/**
 * The loop's next move as an Anthropic reply: a shell command is the Bash tool, an MCP call the
 * tool Claude Code names mcp__<server>__<tool> (deferred: the model is told its name, and Claude Code
 * runs it when called by that name).
 */
function reply(move: Move | ReturnType<typeof mcpMove>): Reply {
  if (!move) throw new Error("no move");
  if ("mcp" in move)
    return { toolUse: { name: `mcp__switchboard__${move.mcp.tool}`, input: move.mcp.input } };
  if ("shell" in move) return { toolUse: { name: "Bash", input: { command: move.shell } } };
  if ("fail" in move)
    return { error: { status: 400, type: "invalid_request_error", message: "FAKE-REFUSAL" } };
  return move;
}

beforeAll(async () => {
  fake = await startFakeAnthropic(
    (request: MessagesRequest) =>
      reply(
        mcpMove(requestText(request), toolResultCount(request)) ??
          nextMove(requestText(request), toolResults(request).length > 0),
      ),
    { usage: { input_tokens: 50_000, output_tokens: 1_000 } },
  );
  loop = await AgentLoop.start("claude", { ...fake, text: requestText });
});

afterAll(() => loop?.stop());

const claudeAgent = (name: string, config: Json = {}) =>
  loop.agent(`${name} ${suffix()}`, "claude_local", {
    ...config,
    // An Anthropic-compatible endpoint of one's own (issue 32): the fake, its key under a name of ours.
    provider: { baseUrl: fake.url, envKey: "GATEWAY_KEY" },
    env: {
      GATEWAY_KEY: "sk-ant-dummy",
      // This machine's runner runs as root: Claude skips permissions as root only in a sandbox.
      ...(process.getuid?.() === 0 ? { IS_SANDBOX: "1" } : {}),
    },
  });

describe("claude_local with the real claude CLI", () => {
  it("mention → runner → claude → Bash → API: done, with transcript and cost; a second wake resumes and pauses at budget", async () => {
    const agent = await claudeAgent("Scribe");
    const first = await expectFullLoop(loop, agent, "Bash");
    // The provider block's endpoint and key reached the CLI (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY).
    expect(fake.requests[0]?.headers["x-api-key"]).toBe("sk-ant-dummy");

    // Cost and tokens: the CLI's result event, rounded up to cents.
    const result = JSON.parse(first.raw.split("\n").find((line) => line.includes('"type":"result"')) ?? "{}");
    expect(first.run.costCents).toBe(Math.ceil(Number((result.total_cost_usd * 100).toFixed(6))));
    expect(first.run.usage).toMatchObject({
      provider: "anthropic",
      inputTokens: 100_000,
      outputTokens: 2_000,
    });
    // Claude Code is handed the one cent left (--max-budget-usd) and stops itself at it.
    const second = await expectResumedAtBudget(loop, agent, first, true);
    expect(second.costCents).toBeGreaterThan(0);
  });

  it("our agent uses /mcp: the runner's MCP config lets the model check out, comment and finish through MCP tools, no curl", async () => {
    const agent = await claudeAgent(MCP_AGENT);
    await expectMcpLoop(loop, agent, (tool) => `mcp__switchboard__${tool}`);
    const sent = loop.sent().filter((text) => text.includes(agent.name));
    // Claude Code connected and listed the server's tools: the model was told their names, and the
    // protocol told it to prefer them over curl.
    expect(sent[0]).toContain("mcp__switchboard__update_issue");
    // What came back from each call is the API's answer through /mcp (the comment it created).
    expect(sent.at(-1)).toMatch(new RegExp(`authorAgentId\\W+${agent.id}`));
  });

  it("a CLI that fails after checking out, hangs, or prints garbage ends the run with a readable reason and releases the issue", async () => {
    const breaker = await claudeAgent("Breaker");
    const sleeper = await claudeAgent("Sleeper", { timeoutSec: 4 });
    await Promise.all([
      expectReleased(loop, breaker, "failed", /^claude reported an error: .*FAKE-REFUSAL/),
      expectReleased(
        loop,
        sleeper,
        "timed_out",
        "timeout: still running after 4s, the process group was stopped",
      ),
      expectImpostorReleased(
        loop,
        "claude_local",
        "claude",
        "claude's output was not stream-json (first unreadable line: I checked it out, but I am not claude.)",
      ),
    ]);
  });
});
