// Issue objects are shards of a company (docs/decisions.md, "Issue objects are shards of a company"):
// touching many issues starts at most ISSUE_SHARDS_PER_COMPANY objects for their company, where one
// object per issue started (and gave storage to) one per issue.
import { env, listDurableObjectIds } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ISSUE_SHARDS_PER_COMPANY } from "../../../../workers/control/issues/object";
import { call } from "../../helpers";
import { boardUser, seedAgent, seedCompany, seedIssue } from "../helpers";

describe("issue objects", () => {
  it("forty issues read and checked out live in at most sixteen objects of their company", async () => {
    const before = new Set((await listDurableObjectIds(env.ISSUE)).map((id) => id.toString()));
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id);
    for (let i = 0; i < 40; i++) {
      const issue = await seedIssue(company, { status: "todo" });
      expect((await call("GET", `/api/issues/${issue.id}`, { headers: agent.headers })).status).toBe(200);
      const checkout = await call("POST", `/api/issues/${issue.id}/checkout`, {
        headers: agent.headers,
        body: { agentId: agent.id, expectedStatuses: ["todo"] },
      });
      expect(checkout.status).toBe(200);
      const comment = await call("POST", `/api/issues/${issue.id}/comments`, {
        headers: agent.headers,
        body: { body: "started" },
      });
      expect(comment.status).toBe(201);
    }
    const started = (await listDurableObjectIds(env.ISSUE)).filter((id) => !before.has(id.toString()));
    expect(started.length).toBeGreaterThan(0);
    expect(started.length).toBeLessThanOrEqual(ISSUE_SHARDS_PER_COMPANY);
  });
});
