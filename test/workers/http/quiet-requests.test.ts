// The Worker itself writes nothing for a request that succeeds: its own lines are warnings and
// errors (a failed handler, a lost webhook), so the hot path never pays for logging. (The per-request
// lines of the local stack are Miniflare's, opt-in: test/e2e/logging.test.ts.)
import { afterEach, describe, expect, it, vi } from "vitest";
import { boardUser, seedAgent, seedCompany, seedIssue } from "../control/helpers";
import { call } from "../helpers";

const METHODS = ["log", "info", "debug", "warn", "error"] as const;

afterEach(() => {
  vi.restoreAllMocks();
});

describe("request logging in the Worker", () => {
  it("writes no console line for successful reads and writes", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const issue = await seedIssue(company);
    const agent = await seedAgent(company.id);
    const spies = METHODS.map((method) => vi.spyOn(console, method).mockImplementation(() => undefined));

    expect((await call("GET", "/api/health")).status).toBe(200);
    expect((await call("GET", `/api/issues/${issue.id}`, { headers: owner.headers })).status).toBe(200);
    expect((await call("GET", `/api/issues/${issue.id}`, { headers: agent.headers })).status).toBe(200);
    const created = await call("POST", `/api/companies/${company.id}/issues`, {
      headers: owner.headers,
      body: { title: "quiet" },
    });
    expect(created.status).toBe(201);

    for (const [index, spy] of spies.entries())
      expect(spy, `console.${METHODS[index]}`).not.toHaveBeenCalled();
  });
});
