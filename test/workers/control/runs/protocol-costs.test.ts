// The protocol a run's agent reads says how to report its cost per adapter: a CLI the runner meters
// (claude_local, codex_local, gemini_local, opencode_local) is told not to, since the runner already
// records the CLI's own cost and a POST would count it twice; a `process` agent is told how to.
// A CLI run is also told its platform tools, named as its CLI names them, and to prefer them to curl.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { type BoardUser, boardUser, seedCompany, seedIssue } from "../helpers";
import { claimOne, runnerFor } from "../runner-link";

beforeEach(async () => {
  await env.DB.prepare(
    "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
  ).run();
});

/** The protocol and the platform skill's text a fresh run of an agent of `adapterType` is handed. */
async function runTexts(board: BoardUser, adapterType: string): Promise<{ protocol: string; skill: string }> {
  const company = await seedCompany(board);
  const hired = await call<{ id: string; name: string }>("POST", `/api/companies/${company.id}/agents`, {
    headers: board.headers,
    body: { name: `Agent ${adapterType}`, role: "engineer", adapterType, adapterConfig: { command: "node" } },
  });
  expect(hired.status, JSON.stringify(hired.body)).toBe(201);
  const issue = await seedIssue(company, { status: "todo" });
  const mentioned = await call("POST", `/api/issues/${issue.id}/comments`, {
    headers: board.headers,
    body: { body: `@${hired.body.name} please` },
  });
  expect(mentioned.status).toBe(201);
  const run = (await claimOne(await runnerFor(board, company.id))) as unknown as {
    protocol?: string;
    skills?: Array<{ slug: string; content: string }>;
  };
  const skill = run.skills?.find((entry) => entry.slug === "switchboard")?.content ?? "";
  expect(skill).toContain("heartbeat");
  return { protocol: run.protocol ?? "", skill };
}

describe("cost reporting in the protocol a run is handed", () => {
  it.each(["claude_local", "codex_local", "gemini_local", "opencode_local"])(
    "a %s run is told the runner meters its cost, never to POST cost events",
    async (adapterType) => {
      const { protocol, skill } = await runTexts(await boardUser(), adapterType);
      for (const text of [protocol, skill]) {
        expect(text).not.toContain("cost-events");
        expect(text).toContain("the runner meters your model's cost");
        expect(text).toContain("do not report them");
      }
    },
  );

  it("a process run is told to report its cost once: a PLATFORM_USAGE line or POST cost-events", async () => {
    const { protocol, skill } = await runTexts(await boardUser(), "process");
    for (const text of [protocol, skill]) {
      expect(text).toContain("/cost-events");
      expect(text).toContain("PLATFORM_USAGE");
      expect(text).not.toContain("do not report them");
    }
  });
});

// The platform's MCP tools, as each CLI the runner connects to /mcp names them
// (bridge/src/runner/adapters/mcp.ts); a process agent has no MCP client to connect.
describe("the platform's MCP tools in the protocol a run is handed", () => {
  it.each([
    ["claude_local", "mcp__switchboard__checkout_issue"],
    ["codex_local", "mcp__switchboard.checkout_issue"],
    ["gemini_local", "mcp_switchboard_checkout_issue"],
    ["opencode_local", "switchboard_checkout_issue"],
  ])("a %s run is told its platform tools (%s, …) and to prefer them to curl", async (adapterType, tool) => {
    const { protocol, skill } = await runTexts(await boardUser(), adapterType);
    for (const text of [protocol, skill]) {
      expect(text).toContain(tool);
      expect(text).toContain("Prefer them to curl");
      expect(text).toContain("curl with $PLATFORM_API_KEY keeps working");
    }
  });

  it("a process run is not told of tools it does not have", async () => {
    const { protocol } = await runTexts(await boardUser(), "process");
    expect(protocol).not.toContain("Your platform tools");
  });
});
