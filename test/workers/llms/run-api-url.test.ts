// The URL an agent is told to call is the URL it is given: a run's PLATFORM_API_URL, followed the way
// the /llms guidance says (`GET $PLATFORM_API_URL/agents/me`, …), reaches the API with the run's key,
// not the sign-in redirect. The guide an agent reads with that key spells the same base URL.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { boardUser, seedAgent, seedCompany, seedIssue } from "../control/helpers";
import { claimOne, runnerFor } from "../control/runner-link";
import { BASE, call, dispatch } from "../helpers";

beforeEach(async () => {
  await env.DB.prepare(
    "UPDATE heartbeat_runs SET status = 'cancelled' WHERE status IN ('queued', 'running')",
  ).run();
});

/** What a run's process receives, claimed as a runner would. */
async function claimedRun() {
  const board = await boardUser();
  const company = await seedCompany(board);
  const agent = await seedAgent(company.id, {
    name: "Reader",
    adapterConfig: { command: "node", args: ["agent.mjs"], cwd: "/work" },
  });
  const issue = await seedIssue(company, { status: "todo" });
  const mentioned = await call("POST", `/api/issues/${issue.id}/comments`, {
    headers: board.headers,
    body: { body: "@Reader look" },
  });
  expect(mentioned.status).toBe(201);
  const run = await claimOne(await runnerFor(board, company.id));
  const variable = (name: string): string => run.env[name] ?? "";
  return { run, variable, agent, issue };
}

/** A request exactly as an agent builds it from the environment: no path of its own added. */
const followed = (url: string, key: string, init: { method?: string; body?: unknown } = {}) =>
  dispatch(
    new Request(url, {
      method: init.method ?? "GET",
      redirect: "manual",
      headers: {
        Authorization: `Bearer ${key}`,
        ...(init.body ? { "Content-Type": "application/json" } : {}),
      },
      body: init.body ? JSON.stringify(init.body) : undefined,
    }),
  );

describe("PLATFORM_API_URL as the guidance describes it", () => {
  it("is the API's base URL: `$PLATFORM_API_URL/agents/me` and the checkout answer 200, never a redirect", async () => {
    const { variable, agent, issue } = await claimedRun();
    const api = variable("PLATFORM_API_URL");
    const key = variable("PLATFORM_API_KEY");
    expect(api).toBe(`${BASE}/api`);

    const me = await followed(`${api}/agents/me`, key);
    expect(me.status, me.headers.get("location") ?? "").toBe(200);
    expect(await me.json()).toMatchObject({ id: agent.id });
    const checkout = await followed(`${api}/issues/${issue.id}/checkout`, key, {
      method: "POST",
      body: { agentId: agent.id, expectedStatuses: ["todo"] },
    });
    expect(checkout.status).toBe(200);
  });

  it("the guide read with the run's key names the same base URL in every call, and says it includes /api", async () => {
    const { variable } = await claimedRun();
    const api = variable("PLATFORM_API_URL");
    const guide = await call<string>("GET", "/llms/agent-configuration.txt", {
      headers: { Authorization: `Bearer ${variable("PLATFORM_API_KEY")}` },
    });
    expect(guide.status).toBe(200);
    const text = String(guide.body);
    expect(text).toContain(`GET ${api}/agents/me`);
    expect(text).toContain(`POST ${api}/issues/{issueId}/checkout`);
    expect(text).toMatch(/PLATFORM_API_URL\s+base URL of the API, e\.g\. https:\/\/example\.com\/api/);
    // Every call the protocol spells out, with its placeholders filled, is a real API route.
    const calls = [...text.matchAll(/(GET|POST|PATCH) (\S+)/g)]
      .map(([, method = "GET", url = ""]) => ({ method, url: url.replace(/[;,.)]+$/, "") }))
      .filter(({ url }) => url.startsWith(api));
    expect(calls.length).toBeGreaterThan(4);
    for (const { method, url } of calls) {
      const filled = url
        .replace("{companyId}", variable("PLATFORM_COMPANY_ID"))
        .replace("{agentId}", variable("PLATFORM_AGENT_ID"))
        .replace("{issueId}", variable("PLATFORM_TASK_ID"));
      // Bodiless on purpose: a write route answers 400 for the missing body, which proves it exists.
      const answer = await followed(filled, variable("PLATFORM_API_KEY"), { method });
      const where = `${method} ${filled} answered ${answer.status}`;
      expect([301, 302, 303, 307, 308, 404], where).not.toContain(answer.status);
    }
  });
});
