// Guarded writes (issue 31; workers/auth/credential-guard.ts): create issue and checkout may start
// from this isolate's recent answer for a key, without asking the Keyring, because their own D1 batch
// re-checks the key. Each case changes a credential as another isolate would (D1 first, then that
// key's Keyring shard), leaving this isolate's recent answer in place: without the guard in the
// commit, every write below would succeed on the stale answer.
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { agentKeyringTagOf } from "../../../workers/auth/agent-key-format";
import { keyringTagFor } from "../../../workers/auth/api-key-format";
import { keyringShard } from "../../../workers/auth/keyring";
import { meterReading, meterSince } from "../../../workers/meter/meter";
import {
  boardUser,
  type SeededAgent,
  type SeededCompany,
  type SeededIssue,
  seedAgent,
  seedCompany,
  seedIssue,
} from "../control/helpers";
import { call } from "../helpers";

let company: SeededCompany;
let agent: SeededAgent;
let issue: SeededIssue;

beforeEach(async () => {
  const owner = await boardUser();
  company = await seedCompany(owner);
  agent = await seedAgent(company.id);
  issue = await seedIssue(company, { status: "todo" });
});

/** A read: the Keyring answers, and this isolate keeps the answer for a second. */
async function recentlyResolved(headers: Record<string, string>, path: string): Promise<void> {
  expect((await call("GET", path, { headers })).status).toBe(200);
}

/** What another isolate does after changing an agent's key, role or status: tell its Keyring shard. */
const otherIsolateInvalidatesAgent = async (seeded: SeededAgent) =>
  keyringShard(env, agentKeyringTagOf(seeded.key)).invalidateAgent(seeded.id);

/** An agent's keys revoked by another isolate: D1, then the keys' Keyring shard. */
async function revokeKeysElsewhere(seeded: SeededAgent): Promise<void> {
  await env.DB.prepare("UPDATE agent_api_keys SET revoked_at = ? WHERE agent_id = ?")
    .bind(Date.now(), seeded.id)
    .run();
  await otherIsolateInvalidatesAgent(seeded);
}

/** An agent terminated by another isolate. */
async function terminateElsewhere(seeded: SeededAgent): Promise<void> {
  await env.DB.prepare("UPDATE agents SET status = 'terminated' WHERE id = ?").bind(seeded.id).run();
  await otherIsolateInvalidatesAgent(seeded);
}

const createIssue = (headers: Record<string, string>, title: string) =>
  call("POST", `/api/companies/${company.id}/issues`, { body: { title, status: "todo" }, headers });

const checkout = (seeded: SeededAgent) =>
  call("POST", `/api/issues/${issue.id}/checkout`, {
    body: { agentId: seeded.id, expectedStatuses: ["todo"] },
    headers: seeded.headers,
  });

async function issuesTitled(title: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM issues WHERE company_id = ? AND title = ?")
    .bind(company.id, title)
    .first<{ n: number }>();
  return row?.n ?? -1;
}

async function issueState(): Promise<{ status: string; assignee_agent_id: string | null }> {
  const row = await env.DB.prepare("SELECT status, assignee_agent_id FROM issues WHERE id = ?")
    .bind(issue.id)
    .first<{ status: string; assignee_agent_id: string | null }>();
  if (!row) throw new Error("seeded issue missing");
  return row;
}

describe("a guarded write sees a credential change committed by another isolate at once", () => {
  it.each([
    ["key revoked", "After revocation", () => revokeKeysElsewhere(agent)],
    ["terminated", "After termination", () => terminateElsewhere(agent)],
  ])("an agent %s elsewhere creates nothing and claims nothing (401)", async (_, title, change) => {
    await recentlyResolved(agent.headers, "/api/agents/me");
    await change();

    expect((await createIssue(agent.headers, title)).status).toBe(401);
    expect((await checkout(agent)).status).toBe(401);
    expect(await issuesTitled(title)).toBe(0);
    expect(await issueState()).toEqual({ status: "todo", assignee_agent_id: null });
  });

  it("an agent key revoked elsewhere neither comments nor changes the issue (401)", async () => {
    await recentlyResolved(agent.headers, "/api/agents/me");
    await revokeKeysElsewhere(agent);

    const comment = await call("POST", `/api/issues/${issue.id}/comments`, {
      body: { body: "Too late" },
      headers: agent.headers,
    });
    expect(comment.status).toBe(401);
    const patch = await call("PATCH", `/api/issues/${issue.id}`, {
      body: { title: "Renamed too late", comment: "Also too late" },
      headers: agent.headers,
    });
    expect(patch.status).toBe(401);
    const comments = await env.DB.prepare("SELECT count(*) AS n FROM issue_comments WHERE issue_id = ?")
      .bind(issue.id)
      .first<{ n: number }>();
    expect(comments?.n).toBe(0);
    expect(await issuesTitled("Renamed too late")).toBe(0);
  });

  it("an agent made CEO elsewhere checks out as the CEO: the strategy gate holds it back (422)", async () => {
    await recentlyResolved(agent.headers, "/api/agents/me");
    await env.DB.prepare("UPDATE agents SET role = 'ceo' WHERE id = ?").bind(agent.id).run();
    await otherIsolateInvalidatesAgent(agent);

    // The recent answer says engineer, which skips the gate; the guard sees the role changed, the
    // Keyring answers ceo, and the write runs again as the CEO it now is.
    const refused = await checkout(agent);
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body)).toMatch(/strategy/i);
    expect(await issueState()).toEqual({ status: "todo", assignee_agent_id: null });
  });

  it("a person's key replaced elsewhere creates nothing (401)", async () => {
    const person = await boardUser();
    const own = await seedCompany(person);
    await recentlyResolved(person.headers, `/api/companies/${own.id}`);
    await env.DB.prepare("DELETE FROM api_keys WHERE user_id = ?").bind(person.userId).run();
    await keyringShard(env, await keyringTagFor(person.userId)).invalidate(person.userId);

    const res = await call("POST", `/api/companies/${own.id}/issues`, {
      body: { title: "After the key went", status: "todo" },
      headers: person.headers,
    });
    expect(res.status).toBe(401);
    const row = await env.DB.prepare("SELECT count(*) AS n FROM issues WHERE company_id = ?")
      .bind(own.id)
      .first<{ n: number }>();
    expect(row?.n).toBe(0);
  });

  it.each([
    ["removed from the company", "DELETE FROM company_memberships WHERE user_id = ? AND company_id = ?", 404],
    [
      "made a viewer",
      "UPDATE company_memberships SET role = 'viewer' WHERE user_id = ? AND company_id = ?",
      403,
    ],
  ])("a person %s elsewhere creates nothing there", async (_, change, status) => {
    const person = await boardUser();
    const own = await seedCompany(person);
    const create = (title: string) =>
      call("POST", `/api/companies/${own.id}/issues`, { body: { title }, headers: person.headers });
    // D1 confirms the person writes here, and this isolate remembers it for a second.
    expect((await create("Before")).status).toBe(201);
    await env.DB.prepare(change).bind(person.userId, own.id).run();

    expect((await create("After the change")).status).toBe(status);
    const row = await env.DB.prepare("SELECT count(*) AS n FROM issues WHERE company_id = ?")
      .bind(own.id)
      .first<{ n: number }>();
    expect(row?.n).toBe(1);
  });

  it.each([
    ["removed from the company", "DELETE FROM company_memberships WHERE user_id = ? AND company_id = ?", 404],
    [
      "made a viewer",
      "UPDATE company_memberships SET role = 'viewer' WHERE user_id = ? AND company_id = ?",
      403,
    ],
  ])(
    "a person %s elsewhere neither comments on its issues nor is answered a no-op change",
    async (_, change, status) => {
      const person = await boardUser();
      const own = await seedCompany(person);
      const ownIssue = await seedIssue(own, { status: "todo", priority: "high" });
      const comment = (body: string) =>
        call("POST", `/api/issues/${ownIssue.id}/comments`, { body: { body }, headers: person.headers });
      // D1 confirms the person writes in this company, and this isolate knows where the issue lives.
      expect((await comment("Before")).status).toBe(201);
      await env.DB.prepare(change).bind(person.userId, own.id).run();

      expect((await comment("After the change")).status).toBe(status);
      // A PATCH that changes nothing commits nothing, yet its answer would show the issue.
      const unchanged = await call("PATCH", `/api/issues/${ownIssue.id}`, {
        body: { priority: "high" },
        headers: person.headers,
      });
      expect(unchanged.status).toBe(status);
      const row = await env.DB.prepare("SELECT count(*) AS n FROM issue_comments WHERE issue_id = ?")
        .bind(ownIssue.id)
        .first<{ n: number }>();
      expect(row?.n).toBe(1);
    },
  );

  it("a CEO's checkout, which the one-batch claim does not take, asks the Keyring first and its object once", async () => {
    const ceo = await seedAgent(company.id, { role: "ceo" });
    await recentlyResolved(ceo.headers, "/api/agents/me");
    const start = meterReading();
    const refused = await checkout(ceo);
    // The strategy gate (no approved strategy yet), reached through the ordinary handler.
    expect(refused.status).toBe(422);
    // The Keyring, then the IssueDO: not the IssueDO twice around it.
    expect(meterSince(start).doCalls).toBe(2);
  });

  it("a key that still works writes on the recent answer, and its writes are whole", async () => {
    await recentlyResolved(agent.headers, "/api/agents/me");
    const created = await createIssue(agent.headers, "Still trusted");
    expect(created.status).toBe(201);
    expect((await checkout(agent)).status).toBe(200);
    const comment = await call("POST", `/api/issues/${issue.id}/comments`, {
      body: { body: "Working on it" },
      headers: agent.headers,
    });
    expect(comment.status).toBe(201);
    const patch = await call("PATCH", `/api/issues/${issue.id}`, {
      body: { priority: "high" },
      headers: agent.headers,
    });
    expect(patch.status).toBe(200);
    expect(await issuesTitled("Still trusted")).toBe(1);
    expect(await issueState()).toEqual({ status: "in_progress", assignee_agent_id: agent.id });
  });
});
