// Runners in workerd: registration by a company's owners only (token shown once, SHA-256 at rest),
// listing, revocation that cuts the link at once, attaching and detaching companies, and tenancy: a
// runner receives only runs, and secrets, of the companies it serves, while its owner owns them.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BRIDGE_TOKEN } from "../../fake-bridge";
import { call } from "../../helpers";
import { eventually } from "../../patience";
import { boardUser, seedAgent, seedCompany, seedIssue } from "../helpers";
import {
  claimOne,
  dialRunner,
  openRunnerLink,
  type RunAssignment,
  registerRunner,
  sayHello,
} from "../runner-link";

type Json = Record<string, unknown>;

async function mentionWake(headers: Record<string, string>, issueId: string, agentName: string) {
  const res = await call("POST", `/api/issues/${issueId}/comments`, {
    headers,
    body: { body: `@${agentName} go` },
  });
  expect(res.status).toBe(201);
}

const runRow = (id: string) =>
  env.DB.prepare("SELECT * FROM heartbeat_runs WHERE id = ?").bind(id).first<Json>();

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("registering runners", () => {
  it("an owner registers one: the token is answered once, kept as SHA-256, never listed again", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const created = await call<{ runner: Json; token: string }>(
      "POST",
      `/api/companies/${company.id}/runners`,
      {
        headers: owner.headers,
        body: { name: "build box" },
      },
    );
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^swr_[0-9A-Za-z]{49}$/);
    expect(created.body.runner).toMatchObject({
      name: "build box",
      allCompanies: false,
      companyIds: [company.id],
      connected: false,
      tokenPrefix: created.body.token.slice(0, 10),
    });
    const row = await env.DB.prepare("SELECT * FROM runners WHERE id = ?")
      .bind(created.body.runner.id)
      .first<Json>();
    expect(row?.token_hash).toBe(await sha256Hex(created.body.token));
    expect(JSON.stringify(row)).not.toContain(created.body.token);
    const mine = await call<Json[]>("GET", "/api/runners", { headers: owner.headers });
    expect(mine.body.map((r) => r.id)).toEqual([created.body.runner.id]);
    expect(JSON.stringify(mine.body)).not.toContain(created.body.token);
    const activity = await env.DB.prepare(
      "SELECT action FROM activity_log WHERE company_id = ? AND entity_type = 'runner'",
    )
      .bind(company.id)
      .all<Json>();
    expect(activity.results).toEqual([{ action: "runner.registered" }]);
  });

  it("a member who is not an owner gets 403, another tenant 404, an agent 403, and nothing is written", async () => {
    const owner = await boardUser();
    const member = await boardUser();
    const stranger = await boardUser();
    const company = await seedCompany(owner, { members: [member] });
    const agent = await seedAgent(company.id);
    const attempt = (headers: Record<string, string>) =>
      call("POST", `/api/companies/${company.id}/runners`, { headers, body: { name: "x" } });
    expect((await attempt(member.headers)).status).toBe(403);
    expect((await attempt(stranger.headers)).status).toBe(404);
    expect((await attempt(agent.headers)).status).toBe(403);
    const across = await call("POST", "/api/runners", {
      headers: member.headers,
      body: { name: "x", companyIds: [company.id] },
    });
    expect(across.status).toBe(403);
    const count = await env.DB.prepare("SELECT count(*) AS n FROM runners WHERE owner_user_id IN (?, ?)")
      .bind(member.userId, stranger.userId)
      .first<Json>();
    expect(count?.n).toBe(0);
  });

  it("rejects a body with both, or neither, of companyIds and allCompanies, and bad names", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    for (const body of [
      { name: "x" },
      { name: "x", allCompanies: true, companyIds: [company.id] },
      { name: "", allCompanies: true },
      { name: "x".repeat(101), allCompanies: true },
      { name: "x", companyIds: ["not-a-uuid"] },
      { name: "x", allCompanies: true, extra: 1 },
    ]) {
      const res = await call("POST", "/api/runners", { headers: owner.headers, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const malformed = await call("POST", "/api/runners", {
      headers: { ...owner.headers, "content-type": "application/json" },
      rawBody: "{",
    });
    expect(malformed.status).toBe(400);
  });

  it("the company lists its serving runners: connected and seen once one says hello, with its CLIs", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const runner = await registerRunner(owner, company.id);
    const listed = async () =>
      (await call<Json[]>("GET", `/api/companies/${company.id}/runners`, { headers: owner.headers })).body;
    expect(await listed()).toEqual([
      expect.objectContaining({ id: runner.id, connected: false, version: null, lastSeenAt: null }),
    ]);
    const before = Date.now();
    const link = await openRunnerLink(runner.token);
    await eventually(async () => (await listed())[0]?.connected === true);
    const hello = (await listed())[0];
    expect(hello).toMatchObject({
      version: "test",
      capabilities: { slots: 2, platform: "linux", arch: "x64", node: "v20", runAs: null },
    });
    expect(Date.parse(String(hello?.lastSeenAt))).toBeGreaterThanOrEqual(before);

    // The CLIs it found, as the runner's second hello reports them.
    const clis = [
      { adapterType: "claude_local", command: "claude", version: "2.1.331 (Claude Code)" },
      { adapterType: "gemini_local", command: "gemini", version: null },
    ];
    sayHello(link, clis);
    await eventually(async () => JSON.stringify((await listed())[0]?.capabilities).includes("claude_local"));
    expect((await listed())[0]?.capabilities).toMatchObject({ clis });

    // As if its last heartbeat was written a minute ago: the next one moves last-seen forward.
    const minuteAgo = Date.now() - 60_000;
    await env.DB.prepare("UPDATE runners SET last_seen_at = ? WHERE id = ?").bind(minuteAgo, runner.id).run();
    expect(Date.parse(String((await listed())[0]?.lastSeenAt))).toBe(minuteAgo);
    link.send({ type: "heartbeat", runIds: [] });
    await eventually(async () => Date.parse(String((await listed())[0]?.lastSeenAt)) > minuteAgo + 30_000);
    link.socket.close(1000, "bye");
    await eventually(async () => (await listed())[0]?.connected === false);
  });
});

describe("the runner link", () => {
  it("opens only with a live runner token", async () => {
    expect((await dialRunner(BRIDGE_TOKEN)).status).toBe(401);
    expect((await dialRunner(`swr_${"A".repeat(49)}`)).status).toBe(401);
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const runner = await registerRunner(owner, company.id);
    const ok = await dialRunner(runner.token);
    expect(ok.status).toBe(101);
    ok.webSocket?.accept();
    ok.webSocket?.close();
  });
});

describe("tenancy", () => {
  it("two owners, two runners, interleaved wakes: each runner gets only its company's runs and secrets", async () => {
    const tenants = [];
    for (const label of ["a", "b"]) {
      const owner = await boardUser();
      const company = await seedCompany(owner);
      const secret = await call<Json>("POST", `/api/companies/${company.id}/secrets`, {
        headers: owner.headers,
        body: { name: "API token", value: `secret-of-${label}` },
      });
      expect(secret.status).toBe(201);
      const agent = await seedAgent(company.id, {
        name: `Worker${label.toUpperCase()}`,
        adapterConfig: { command: "true", env: { TOKEN: { type: "secret_ref", secretId: secret.body.id } } },
      });
      const link = await openRunnerLink((await registerRunner(owner, company.id)).token);
      tenants.push({ label, owner, company, agent, link });
    }
    const [a, b] = tenants as [(typeof tenants)[0], (typeof tenants)[0]];
    for (let round = 0; round < 3; round++) {
      for (const tenant of [b, a]) {
        const issue = await seedIssue(tenant.company, { status: "todo" });
        await mentionWake(tenant.owner.headers, issue.id, tenant.agent.name);
      }
    }
    const handed: Record<string, RunAssignment[]> = { a: [], b: [] };
    for (const tenant of [a, b]) {
      for (let i = 0; i < 3; i++) {
        const run = await claimOne(tenant.link);
        handed[tenant.label]?.push(run);
        tenant.link.send({ type: "finish", runId: run.runId, exitCode: 0, timedOut: false, logFrames: 0 });
        await eventually(async () => (await runRow(run.runId))?.status === "succeeded");
      }
      tenant.link.send({ type: "claim", slots: 4 });
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const tenant of [a, b]) {
      const other = tenant === a ? b : a;
      const runs = tenant.link.frames.filter((f) => f.type === "run").map((f) => f.run as RunAssignment);
      expect(runs).toHaveLength(3);
      for (const run of runs) {
        expect(run.agentId).toBe(tenant.agent.id);
        expect(run.env.PLATFORM_COMPANY_ID).toBe(tenant.company.id);
        expect(run.env.TOKEN).toBe(`secret-of-${tenant.label}`);
        expect(JSON.stringify(run)).not.toContain(`secret-of-${other.label}`);
      }
    }
  });

  it("a runner stops serving a company the moment its owner stops owning it", async () => {
    const owner = await boardUser();
    const coOwner = await boardUser();
    const company = await seedCompany(owner, { members: [coOwner] });
    await env.DB.prepare("UPDATE company_memberships SET role = 'owner' WHERE user_id = ?")
      .bind(coOwner.userId)
      .run();
    const agent = await seedAgent(company.id, { name: "Demoted", adapterConfig: { command: "true" } });
    const link = await openRunnerLink((await registerRunner(owner, company.id)).token);
    await env.DB.prepare(
      "UPDATE company_memberships SET role = 'member' WHERE user_id = ? AND company_id = ?",
    )
      .bind(owner.userId, company.id)
      .run();
    const issue = await seedIssue(company, { status: "todo" });
    await mentionWake(coOwner.headers, issue.id, agent.name);
    link.send({ type: "claim", slots: 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(link.frames.filter((f) => f.type === "run")).toEqual([]);
    const runs = await call<Json[]>(
      "GET",
      `/api/companies/${company.id}/heartbeat-runs?agentId=${agent.id}`,
      {
        headers: coOwner.headers,
      },
    );
    expect(runs.body).toEqual([expect.objectContaining({ status: "queued", waitingForRunner: true })]);
  });
});

describe("attaching, detaching and revoking", () => {
  it("an all-companies runner serves a company its owner creates later; attach and detach move a listed one", async () => {
    const owner = await boardUser();
    const first = await seedCompany(owner);
    const everything = await call<{ runner: Json; token: string }>("POST", "/api/runners", {
      headers: owner.headers,
      body: { name: "all of mine", allCompanies: true },
    });
    expect(everything.status).toBe(201);
    // Created through the API, as a person does: the runner follows the companies its owner creates.
    const made = await call<{ id: string; name: string; issuePrefix: string }>("POST", "/api/companies", {
      headers: owner.headers,
      body: { name: `Later ${crypto.randomUUID().slice(0, 8)}` },
    });
    expect(made.status).toBe(201);
    const later = made.body;
    const agent = await seedAgent(later.id, { name: "Later", adapterConfig: { command: "true" } });
    const wide = await openRunnerLink(everything.body.token);
    const issue = await seedIssue(later, { status: "todo" });
    await mentionWake(owner.headers, issue.id, agent.name);
    const run = await claimOne(wide);
    expect(run.agentId).toBe(agent.id);
    wide.socket.close(1000, "done");

    const listed = await registerRunner(owner, first.id);
    const attached = await call<Json>("PUT", `/api/companies/${later.id}/runners/${listed.id}`, {
      headers: owner.headers,
    });
    expect(attached.status).toBe(200);
    expect(attached.body.companyIds).toEqual([first.id, later.id]);
    const detached = await call("DELETE", `/api/companies/${later.id}/runners/${listed.id}`, {
      headers: owner.headers,
    });
    expect(detached.status).toBe(204);
    const narrow = await openRunnerLink(listed.token);
    const next = await seedIssue(later, { status: "todo" });
    await mentionWake(owner.headers, next.id, agent.name);
    narrow.send({ type: "claim", slots: 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(narrow.frames.filter((f) => f.type === "run")).toEqual([]);
  });

  it("attaching needs the runner and the company to be yours; unknown and foreign ids answer 404", async () => {
    const owner = await boardUser();
    const other = await boardUser();
    const mine = await seedCompany(owner);
    const theirs = await seedCompany(other);
    const runner = await registerRunner(owner, mine.id);
    const foreign = await registerRunner(other, theirs.id);
    const put = (companyId: string, runnerId: string, headers = owner.headers) =>
      call("PUT", `/api/companies/${companyId}/runners/${runnerId}`, { headers });
    expect((await put(theirs.id, runner.id)).status).toBe(404);
    expect((await put(mine.id, foreign.id)).status).toBe(404);
    expect((await put(mine.id, crypto.randomUUID())).status).toBe(404);
    expect((await put(mine.id, "not-a-uuid")).status).toBe(400);
    expect((await call("DELETE", `/api/runners/${foreign.id}`, { headers: owner.headers })).status).toBe(404);
  });

  it("revoking cuts the link at once, fails what it ran as runner_revoked, and the token stops working", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id, { name: "Held", adapterConfig: { command: "true" } });
    const runner = await registerRunner(owner, company.id);
    const link = await openRunnerLink(runner.token);
    const issue = await seedIssue(company, { status: "todo" });
    await mentionWake(owner.headers, issue.id, agent.name);
    const run = await claimOne(link);
    const runKey = { Authorization: `Bearer ${run.env.PLATFORM_API_KEY}` };
    const checkout = await call("POST", `/api/issues/${issue.id}/checkout`, {
      headers: runKey,
      body: { agentId: agent.id, expectedStatuses: ["todo"] },
    });
    expect(checkout.status).toBe(200);

    const revoked = await call("DELETE", `/api/runners/${runner.id}`, { headers: owner.headers });
    expect(revoked.status).toBe(204);
    expect((await link.closedWith()).code).toBe(4003);
    await eventually(async () => (await runRow(run.runId))?.status === "failed");
    expect((await runRow(run.runId))?.error_reason).toBe("runner_revoked");
    // The run ends first, then gives back its issues (endRun): the release may lag by a moment.
    const issueOf = () => call<Json>("GET", `/api/issues/${issue.id}`, { headers: owner.headers });
    await eventually(async () => (await issueOf()).body.status === "todo");
    expect((await issueOf()).body).toMatchObject({ status: "todo", assigneeAgentId: null });
    expect((await dialRunner(runner.token)).status).toBe(401);
    const mine = await call<Json[]>("GET", "/api/runners", { headers: owner.headers });
    expect(mine.body[0]).toMatchObject({ id: runner.id, connected: false, revokedAt: expect.any(String) });
  });
});
