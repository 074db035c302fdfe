// opencode_local end to end, with the real OpenCode CLI (pinned, scripts/ensure-agent-clis.mjs) and a
// local fake OpenAI Responses API as the only far end (the agent's provider.baseUrl for the `openai`
// provider, OPENAI_API_KEY from its env): a mention queues a run, a runner the company's owner
// registered starts `opencode` (found on the runner's PATH), the fake model has it run a shell command
// (its bash tool) that checks the issue out, comments and sets it done with curl through our API, and
// the run succeeds with its transcript, tokens and cost from the CLI's JSON events (OpenCode prices
// the tokens itself). The model saw the agent's instructions and the protocol; a second wake on the
// issue resumes the same OpenCode session (the model sees the earlier turns), and its cost pauses the
// agent at its budget, with no PLATFORM_USAGE line anywhere. A model that refuses after the checkout
// fails the run with OpenCode's words, and an impostor `opencode` on the agent's PATH that prints
// garbage after the checkout fails it readably; both release the issue.
// An agent whose model uses the platform's MCP tools (the runner's mcp in OPENCODE_CONFIG_CONTENT)
// does its heartbeat through /mcp alone. A project's budget (issue 32) stops a run in progress that
// keeps spending (OpenCode's per-step cost against the run's cap, the project's remainder), opens the
// hard incident that holds the project's next wake, shows it on the costs page, and an owner's Raise
// and resume there lets the next run start and finish.
// The loop itself and its checks: test/support/agent-loop.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentLoop,
  expectFullLoop,
  expectReleased,
  expectResumedAtBudget,
  suffix,
  TOKENS_PER_REQUEST,
} from "../support/agent-loop.ts";
import { ADMIN } from "../support/api.ts";
import type { FakeOpenAI } from "../support/fake-models/openai.ts";
import { expectImpostorReleased } from "../support/impostor-cli.ts";
import { expectMcpLoop, MCP_AGENT } from "../support/mcp-loop.ts";
import { startOpenAILoop } from "../support/openai-loop.ts";

let loop: AgentLoop;
let fake: FakeOpenAI;
/** Spender calls its shell tool after every answer (each request costs) while this is true. */
let spending = true;

const { input, cached, output } = TOKENS_PER_REQUEST;
// Every answer reports TOKENS_PER_REQUEST: at OpenCode's own gpt-5-mini prices (per M: 0.25 input,
// 0.025 cached, 2 output) $0.0245. A shell command is OpenCode's bash tool.
beforeAll(async () => {
  ({ loop, fake } = await startOpenAILoop(
    "opencode",
    (command) => ({ call: { name: "bash", arguments: { command, description: "Works the issue" } } }),
    // OpenCode names an MCP server's tools <server>_<tool>.
    ({ tool, input }) => ({ name: `switchboard_${tool}`, arguments: input }),
    (text) => {
      if (!text.includes("Spender")) return undefined;
      return spending ? { shell: "true" } : { text: "Nothing more to spend on." };
    },
  ));
});

afterAll(() => loop?.stop());

const opencodeAgent = (name: string) =>
  loop.agent(`${name} ${suffix()}`, "opencode_local", {
    model: "openai/gpt-5-mini",
    provider: { baseUrl: fake.url },
    // npm offline: on its first run in a HOME the CLI installs its plugin SDK from the registry.
    env: { OPENAI_API_KEY: "sk-dummy", npm_config_offline: "true" },
  });

describe("opencode_local with the real opencode CLI", () => {
  it("mention → runner → opencode → bash → API: done, cost from OpenCode's events; a second wake resumes and pauses at budget", async () => {
    const agent = await opencodeAgent("Scribe");
    const first = await expectFullLoop(loop, agent, "bash");

    // Two requests at $0.0245: $0.049, rounded up to 5 cents, as OpenCode priced them.
    expect(first.run.costCents).toBe(5);
    expect(first.run.usage).toMatchObject({
      provider: "openai",
      model: "gpt-5-mini",
      inputTokens: (input - cached) * 2,
      cachedInputTokens: cached * 2,
      outputTokens: output * 2,
      costSource: "opencode",
    });
    expect(fake.requests[0]?.headers.authorization).toBe("Bearer sk-dummy");

    // The resumed run is charged its one request: 3 cents.
    const second = await expectResumedAtBudget(loop, agent, first);
    expect(second.costCents).toBe(3);
  });

  it("our agent uses /mcp: the runner's mcp config lets the model check out, comment and finish through MCP tools, no curl", async () => {
    const agent = await opencodeAgent(MCP_AGENT);
    await expectMcpLoop(loop, agent, (tool) => `switchboard_${tool}`);
  });

  it("a refusal after the checkout, or garbage from the CLI, fails the run readably and releases the issue", async () => {
    const breaker = await opencodeAgent("Breaker");
    await Promise.all([
      expectReleased(loop, breaker, "failed", "opencode reported an error: FAKE-REFUSAL: prompt too long"),
      expectImpostorReleased(
        loop,
        "opencode_local",
        "opencode",
        "opencode's output was not run --format json (first unreadable line: I checked it out, but I am not opencode.)",
      ),
    ]);
  });

  it("a project's budget stops the run that keeps spending, holds the project's next wake, and an owner's raise on the costs page resumes it", async () => {
    const spender = await opencodeAgent("Spender");
    const project = await loop.board.call<{ id: string }>(
      "POST",
      `/api/companies/${loop.companyId}/projects`,
      {
        name: `Frugal ${suffix()}`,
      },
    );
    const issue = await loop.board.call<{ id: string }>("POST", `/api/companies/${loop.companyId}/issues`, {
      title: "Spend on the project",
      status: "todo",
      projectId: project.body.id,
    });
    const budget = await loop.board.call("PUT", `/api/companies/${loop.companyId}/budgets`, {
      scope: "project",
      scopeId: project.body.id,
      window: "month",
      amountCents: 5,
    });
    expect(budget.status).toBe(200);

    // Each request costs $0.0245 at OpenCode's prices: the third step reaches the 5 cents the run was
    // given (the project's remainder), and the runner stops OpenCode there.
    await loop.wake(issue.body.id, spender.name);
    const [stopped] = await loop.endedRuns(spender.id, 1);
    expect(stopped).toMatchObject({ status: "cancelled" });
    expect(stopped?.errorReason).toMatch(/^budget_exceeded/);
    expect(stopped?.costCents).toBeGreaterThanOrEqual(5);
    expect(
      fake.requests.filter((request) => JSON.stringify(request.body).includes("Spender")).length,
    ).toBeLessThan(6);

    const open = await loop.board.call<
      Array<{ id: string; scope: string; scopeId: string; threshold: string }>
    >("GET", `/api/companies/${loop.companyId}/budget-incidents?status=open`);
    const incident = open.body.find((row) => row.scopeId === project.body.id);
    expect(incident).toMatchObject({ scope: "project", threshold: "hard" });

    // The next wake on the project's issue does not start.
    await loop.wake(issue.body.id, spender.name);
    const [, held] = await loop.endedRuns(spender.id, 2);
    expect(held).toMatchObject({ status: "cancelled", errorReason: "project_over_budget" });

    // The costs page shows the incident; the owner raises the budget there.
    const session = await dashboardSession(loop.stack.baseUrl);
    const costs = `${loop.stack.baseUrl}/companies/${loop.companyId}/costs`;
    const page = await (await fetch(costs, { headers: { cookie: session.cookie } })).text();
    expect(page).toContain("Budget incidents");
    expect(page).toContain("Raise and resume");
    const csrf = page.match(/name="_csrf" value="([^"]+)"/)?.[1] ?? "";
    spending = false;
    const raised = await fetch(
      `${loop.stack.baseUrl}/companies/${loop.companyId}/budget-incidents/${incident?.id}/resolve`,
      {
        method: "POST",
        headers: { cookie: session.cookie, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ _csrf: csrf, action: "raise_budget_and_resume", amountCents: "500" }),
        redirect: "manual",
      },
    );
    expect(raised.status).toBe(303);

    await loop.wake(issue.body.id, spender.name);
    const [, , resumed] = await loop.endedRuns(spender.id, 3);
    expect(resumed).toMatchObject({ status: "succeeded" });
  });
});

/** A dashboard session of the local admin (the login's cookie), as a browser would hold it. */
async function dashboardSession(baseUrl: string): Promise<{ cookie: string }> {
  const login = await fetch(`${baseUrl}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(ADMIN),
  });
  expect(login.status).toBe(200);
  return { cookie: (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "" };
}
