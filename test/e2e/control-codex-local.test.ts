// codex_local end to end, with the real Codex CLI (pinned, scripts/ensure-agent-clis.mjs) and a local
// fake OpenAI Responses API as the only far end (the agent's provider.baseUrl, its key from the env
// the agent names): a mention queues a run, a runner the company's owner registered starts `codex`
// (found on the runner's PATH), the fake model has it run a shell command (its exec_command tool) that
// checks the issue out, comments and sets it done with curl through our API, and the run succeeds with
// its transcript and tokens from the CLI's exec --json stream, its cost the tokens × the price table.
// The model saw the agent's instructions and the protocol; a second wake on the issue resumes the
// same Codex thread (the model sees the earlier turns), is charged only its own tokens, and its cost
// pauses the agent at its budget, with no PLATFORM_USAGE line anywhere. A model that refuses after
// the checkout fails the run with Codex's words, and an impostor `codex` on the agent's PATH that
// prints garbage after the checkout fails it readably; both release the issue. An agent whose model
// uses the platform's MCP tools (the runner's -c mcp_servers.switchboard.…) does its heartbeat
// through /mcp alone.
// The loop itself and its checks: test/support/agent-loop.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentLoop,
  expectFullLoop,
  expectPriced,
  expectReleased,
  expectResumedAtBudget,
  suffix,
} from "../support/agent-loop.ts";
import type { FakeOpenAI } from "../support/fake-models/openai.ts";
import { expectImpostorReleased } from "../support/impostor-cli.ts";
import { expectMcpLoop, MCP_AGENT } from "../support/mcp-loop.ts";
import { startOpenAILoop } from "../support/openai-loop.ts";

let loop: AgentLoop;
let fake: FakeOpenAI;

// Every answer reports TOKENS_PER_REQUEST: at gpt-5.5 prices (per M: 5 input, 0.5 cached, 30 output)
// $0.47. gpt-5.5 is the one model Codex 0.169 knows that it offers its classic tools (exec_command)
// rather than its code mode only, and a shell command is that tool.
beforeAll(async () => {
  ({ loop, fake } = await startOpenAILoop(
    "codex",
    (cmd) => ({ call: { name: "exec_command", arguments: { cmd } } }),
    // Codex offers an MCP server's tools as functions of a namespace tool mcp__<server> (deferred
    // behind its tool_search; it runs one called by namespace and name).
    ({ tool, input }) => ({ name: tool, namespace: "mcp__switchboard", arguments: input }),
  ));
});

afterAll(() => loop?.stop());

const codexAgent = (name: string) =>
  loop.agent(`${name} ${suffix()}`, "codex_local", {
    model: "gpt-5.5",
    provider: { baseUrl: fake.url, envKey: "FAKE_OPENAI_KEY" },
    env: { FAKE_OPENAI_KEY: "sk-dummy" },
  });

describe("codex_local with the real codex CLI", () => {
  it("mention → runner → codex → exec_command → API: done, cost from the price table; a second wake resumes and pauses at budget", async () => {
    const agent = await codexAgent("Scribe");
    const first = await expectFullLoop(loop, agent, "command_execution");

    // Two requests at $0.47: 94 cents; tokens from the CLI's turn.completed.
    expectPriced(first.run, { provider: "openai", model: "gpt-5.5", requests: 2, cents: 94 });
    expect(fake.requests[0]?.headers.authorization).toBe("Bearer sk-dummy");

    // Codex reports the thread's running total; the resumed run is charged its one request: 47 cents.
    const second = await expectResumedAtBudget(loop, agent, first);
    expectPriced(second, { provider: "openai", model: "gpt-5.5", requests: 1, cents: 47 });
  });

  it("our agent uses /mcp: the runner's mcp_servers overrides let the model check out, comment and finish through MCP tools, no curl", async () => {
    const agent = await codexAgent(MCP_AGENT);
    await expectMcpLoop(loop, agent, (tool) => `mcp:switchboard/${tool}`);
    // Each answer the model got back is the API's, through /mcp (the comment it created).
    const sent = loop.sent().filter((text) => text.includes(agent.name));
    expect(sent.at(-1)).toMatch(new RegExp(`authorAgentId\\W+${agent.id}`));
  });

  it("a refusal after the checkout, or garbage from the CLI, fails the run readably and releases the issue", async () => {
    const breaker = await codexAgent("Breaker");
    await Promise.all([
      expectReleased(loop, breaker, "failed", /^codex reported an error: .*FAKE-REFUSAL/),
      expectImpostorReleased(
        loop,
        "codex_local",
        "codex",
        "codex's output was not exec --json (first unreadable line: I checked it out, but I am not codex.)",
      ),
    ]);
  });
});
