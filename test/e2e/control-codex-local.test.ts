// codex_local end to end, with the real Codex CLI (pinned, scripts/ensure-agent-clis.mjs) and a local
// fake OpenAI Responses API as the only far end (the agent's provider.baseUrl, its key from the env
// the agent names): a mention queues a run, a runner the company's owner registered starts `codex`
// (found on the runner's PATH), the fake model has it run a shell command (its exec_command tool) that
// checks the issue out, comments and sets it done with curl through our API, and the run succeeds with
// its transcript and tokens from the CLI's exec --json stream, its cost the tokens × the price table.
// The model saw the agent's instructions and the protocol; a second wake on the issue resumes the
// same Codex thread (the model sees the earlier turns), is charged only its own tokens, and its cost
// pauses the agent at its budget, with no PLATFORM_USAGE line anywhere. A model that refuses after
// the checkout fails the run with Codex's words and releases the issue.
// The loop itself and its checks: test/support/agent-loop.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AgentLoop,
  expectBriefed,
  expectFullLoop,
  expectReleased,
  expectResumedAtBudget,
  type Move,
  nextMove,
  suffix,
} from "../support/agent-loop.ts";
import {
  callOutputs,
  type FakeOpenAI,
  type Reply,
  requestText,
  startFakeOpenAI,
} from "../support/fake-models/openai.ts";

let loop: AgentLoop;
let fake: FakeOpenAI;

/** Every request reports these; gpt-5 prices them at $0.1225 (80k × 1.25 + 20k × 0.125 + 2k × 10, per M). */
const USAGE = { input_tokens: 100_000, cached_tokens: 20_000, output_tokens: 2_000 };

/** The loop's next move as a Responses API reply: a shell command is Codex's exec_command tool. */
function reply(move: Move): Reply {
  if ("shell" in move) return { call: { name: "exec_command", arguments: { cmd: move.shell } } };
  if ("fail" in move) return { error: { status: 400, message: "FAKE-REFUSAL: prompt too long" } };
  return move;
}

beforeAll(async () => {
  fake = await startFakeOpenAI(
    (request) => reply(nextMove(requestText(request), callOutputs(request).length > 0)),
    { usage: USAGE },
  );
  loop = await AgentLoop.start("codex");
});

afterAll(async () => {
  await loop?.stop();
  await fake?.close();
});

const codexAgent = (name: string) =>
  loop.agent(`${name} ${suffix()}`, "codex_local", {
    model: "gpt-5-codex",
    provider: { baseUrl: fake.url, envKey: "FAKE_OPENAI_KEY" },
    env: { FAKE_OPENAI_KEY: "sk-dummy" },
  });

describe("codex_local with the real codex CLI", () => {
  it("mention → runner → codex → exec_command → API: done, cost from the price table; a second wake resumes and pauses at budget", async () => {
    const agent = await codexAgent("Scribe");
    // Codex 0.169 has no metadata for gpt-5-codex (its built-in list starts at gpt-5.5) and says so
    // as an error event on every run; the run goes on with fallback metadata.
    const first = await expectFullLoop(
      loop,
      agent,
      "command_execution",
      "Model metadata for `gpt-5-codex` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.",
    );

    // Two requests at $0.1225: $0.245, rounded up to 25 cents; tokens from the CLI's turn.completed.
    expect(first.run.costCents).toBe(25);
    expect(first.run.usage).toMatchObject({
      provider: "openai",
      model: "gpt-5-codex",
      inputTokens: 160_000,
      cachedInputTokens: 40_000,
      outputTokens: 4_000,
      priceTable: "2025-11-01",
    });
    expect(fake.requests[0]?.headers.authorization).toBe("Bearer sk-dummy");
    expectBriefed(
      loop,
      agent,
      fake.requests.map((r) => requestText(r.body)),
    );

    // Codex reports the thread's running total; the resumed run is charged its one request: 13 cents.
    const second = await expectResumedAtBudget(loop, agent, first);
    expect(second.costCents).toBe(13);
    expect(second.usage).toMatchObject({
      inputTokens: 80_000,
      cachedInputTokens: 20_000,
      outputTokens: 2_000,
    });
  });

  it("a model that refuses after the checkout fails the run with Codex's words and releases the issue", async () => {
    await expectReleased(
      loop,
      await codexAgent("Breaker"),
      "failed",
      /^codex reported an error: .*FAKE-REFUSAL/,
    );
  });
});
