// Which companies a runner serves (issue 25, H-a and the forged-finish low), in workerd: a runner
// registered with `allCompanies` serves the companies its owner created, now and later, never one its
// owner joins by invite until its owner attaches it; any owner of a company detaches any runner from
// it; a finish frame only ends a run that the sending link holds.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Link } from "../../fake-bridge";
import { asKey, call, createUser, generateKey } from "../../helpers";
import { eventually } from "../../patience";
import { type BoardUser, boardUser, type SeededCompany, seedAgent, seedIssue } from "../helpers";
import { HAND_WRITTEN } from "../packages/fixtures";
import { claimOne, openRunnerLink, type RunAssignment } from "../runner-link";

type Json = Record<string, unknown>;

async function staffUser(): Promise<BoardUser> {
  const session = await createUser("STAFF");
  const key = await generateKey(session);
  return { userId: session.userId, key, headers: asKey(key) };
}

/** A company made through the API, as a person does (so it records who created it). */
async function createCompany(owner: BoardUser): Promise<SeededCompany> {
  const res = await call<SeededCompany>("POST", "/api/companies", {
    headers: owner.headers,
    body: { name: `Co ${crypto.randomUUID().slice(0, 8)}` },
  });
  expect(res.status).toBe(201);
  return res.body;
}

async function registerAllCompanies(owner: BoardUser): Promise<{ runner: Json; token: string }> {
  const res = await call<{ runner: Json; token: string }>("POST", "/api/runners", {
    headers: owner.headers,
    body: { name: "npm start (this machine)", allCompanies: true },
  });
  expect(res.status).toBe(201);
  return res.body;
}

/** `inviter` sends `invitee` an owner invite to the company, and `invitee` joins. */
async function joinAsOwner(inviter: BoardUser, companyId: string, invitee: BoardUser): Promise<void> {
  const invite = await call<{ token: string }>("POST", `/api/companies/${companyId}/member-invites`, {
    headers: inviter.headers,
    body: { role: "owner" },
  });
  expect(invite.status).toBe(201);
  const joined = await call("POST", `/api/member-invites/${invite.body.token}/accept`, {
    headers: invitee.headers,
  });
  expect(joined.status).toBe(200);
}

/** A `process` agent of the company woken by a mention; answers the agent's id. */
async function wakeAgent(by: BoardUser, company: SeededCompany, name: string): Promise<string> {
  const agent = await seedAgent(company.id, { name, adapterConfig: { command: "true" } });
  await wakeAgain(by, company, name);
  return agent.id;
}

async function wakeAgain(by: BoardUser, company: SeededCompany, name: string): Promise<void> {
  const issue = await seedIssue(company, { status: "todo" });
  const res = await call("POST", `/api/issues/${issue.id}/comments`, {
    headers: by.headers,
    body: { body: `@${name} go` },
  });
  expect(res.status).toBe(201);
}

const queuedRuns = async (companyId: string, agentId: string) =>
  (
    await env.DB.prepare("SELECT status FROM heartbeat_runs WHERE company_id = ? AND agent_id = ?")
      .bind(companyId, agentId)
      .all<{ status: string }>()
  ).results.filter((row) => row.status === "queued").length;

/** Finishes a run it was handed, as a runner does, and waits until it is recorded. */
async function finish(link: Link, run: RunAssignment): Promise<void> {
  link.send({ type: "finish", runId: run.runId, exitCode: 0, timedOut: false, logFrames: 0 });
  await eventually(async () => (await runRow(run.runId))?.status === "succeeded");
}

const runRow = (id: string) =>
  env.DB.prepare("SELECT * FROM heartbeat_runs WHERE id = ?").bind(id).first<Json>();

/**
 * The admin (an `npm start` runner with allCompanies) and a STAFF user who creates a company and makes
 * the admin an owner of it. The admin's own company has an agent too: claims hand out the oldest run
 * first, so the admin's runner getting its own company's newer run proves the joined company's older
 * one was not its to take.
 */
async function invitedAdmin() {
  const admin = await boardUser();
  const staff = await staffUser();
  const own = await createCompany(admin);
  const registered = await registerAllCompanies(admin);
  const joined = await createCompany(staff);
  await joinAsOwner(staff, joined.id, admin);
  const link = await openRunnerLink(registered.token);
  return { admin, staff, own, joined, runnerId: String(registered.runner.id), link };
}

describe("allCompanies covers the companies its owner created, not ones joined by invite", () => {
  it("a STAFF user's owner invite does not put their agents on the admin's runner until it is attached", async () => {
    const { admin, staff, own, joined, runnerId, link } = await invitedAdmin();
    const inviters = await wakeAgent(staff, joined, "Inviters");
    const admins = await wakeAgent(admin, own, "Admins");

    const handed = await claimOne(link);
    expect(handed.agentId).toBe(admins);
    await finish(link, handed);
    expect(await queuedRuns(joined.id, inviters)).toBe(1);
    const serving = await call<Json[]>("GET", `/api/companies/${joined.id}/runners`, {
      headers: staff.headers,
    });
    expect(serving.body).toEqual([]);
    const mine = await call<Json[]>("GET", "/api/runners", { headers: admin.headers });
    expect(mine.body[0]).toMatchObject({ id: runnerId, allCompanies: true, companyIds: [own.id] });

    // The admin chooses to run that company's agents on this machine.
    const attached = await call<Json>("PUT", `/api/companies/${joined.id}/runners/${runnerId}`, {
      headers: admin.headers,
    });
    expect(attached.status).toBe(200);
    expect(attached.body.companyIds).toEqual([own.id, joined.id]);
    const next = await claimOne(link);
    expect(next.agentId).toBe(inviters);
    expect(next.env.PLATFORM_COMPANY_ID).toBe(joined.id);
  });

  it("lists by id the companies its owner created, then each one created later, never a joined one", async () => {
    const admin = await boardUser();
    const staff = await staffUser();
    const before = await createCompany(admin);
    const joinedBefore = await createCompany(staff);
    await joinAsOwner(staff, joinedBefore.id, admin);
    const registered = await registerAllCompanies(admin);
    expect(registered.runner.companyIds).toEqual([before.id]);
    const after = await createCompany(admin);
    const joinedAfter = await createCompany(staff);
    await joinAsOwner(staff, joinedAfter.id, admin);
    const mine = await call<Json[]>("GET", "/api/runners", { headers: admin.headers });
    expect(mine.body[0]?.companyIds).toEqual([before.id, after.id]);
  });

  it("a company imported from a package is listed for the importer's allCompanies runner only", async () => {
    const admin = await boardUser();
    const coOwner = await boardUser();
    const source = await createCompany(admin);
    await joinAsOwner(admin, source.id, coOwner);
    const mine = await registerAllCompanies(admin);
    const theirs = await registerAllCompanies(coOwner);
    const imported = await call<{ companyId: string }>("POST", `/api/companies/${source.id}/imports/apply`, {
      headers: admin.headers,
      body: { source: { type: "inline", files: HAND_WRITTEN }, target: { mode: "new_company" } },
    });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    const listed = async (owner: BoardUser) =>
      (await call<Json[]>("GET", "/api/runners", { headers: owner.headers })).body[0]?.companyIds;
    expect(await listed(admin)).toEqual([source.id, imported.body.companyId]);
    expect(await listed(coOwner)).toEqual([]);
    expect(mine.runner.companyIds).toEqual([source.id]);
    expect(theirs.runner.companyIds).toEqual([]);
  });
});

describe("detaching", () => {
  it("any owner detaches another owner's allCompanies runner: 204, and it takes no more of that company's runs", async () => {
    const { admin, staff, own, joined, runnerId, link } = await invitedAdmin();
    const attached = await call("PUT", `/api/companies/${joined.id}/runners/${runnerId}`, {
      headers: admin.headers,
    });
    expect(attached.status).toBe(200);

    const detached = await call("DELETE", `/api/companies/${joined.id}/runners/${runnerId}`, {
      headers: staff.headers,
    });
    expect(detached.status).toBe(204);
    const inviters = await wakeAgent(staff, joined, "Inviters");
    const admins = await wakeAgent(admin, own, "Admins");
    const handed = await claimOne(link);
    expect(handed.agentId).toBe(admins);
    expect(await queuedRuns(joined.id, inviters)).toBe(1);
    const serving = await call<Json[]>("GET", `/api/companies/${joined.id}/runners`, {
      headers: staff.headers,
    });
    expect(serving.body).toEqual([]);
    // The runner is still the admin's, serving the admin's company; the other owner cannot re-attach it.
    const mine = await call<Json[]>("GET", "/api/runners", { headers: admin.headers });
    expect(mine.body[0]).toMatchObject({ id: runnerId, companyIds: [own.id], revokedAt: null });
    const reattach = await call("PUT", `/api/companies/${joined.id}/runners/${runnerId}`, {
      headers: staff.headers,
    });
    expect(reattach.status).toBe(404);
    const activity = await env.DB.prepare(
      "SELECT action, actor_id FROM activity_log WHERE company_id = ? AND entity_id = ? ORDER BY created_at",
    )
      .bind(joined.id, runnerId)
      .all<Json>();
    expect(activity.results).toEqual([
      { action: "runner.attached", actor_id: admin.userId },
      { action: "runner.detached", actor_id: staff.userId },
    ]);
  });
});

/**
 * Waits until the dispatcher has handled everything `link` sent so far: frames are handled in arrival
 * order, so once a hello sent now is written to D1, every earlier frame was handled. A hello is sent
 * again every few seconds (any of them proves the same): on two loaded CI cores one in about ten
 * runs saw a single hello never reach D1, which is a barrier problem, not what these tests check.
 */
async function drained(link: Link, runnerId: string): Promise<void> {
  const sent = new Set<string>();
  let lastSent = 0;
  await eventually(async () => {
    if (Date.now() - lastSent > 4_000) {
      const version = `drained-${crypto.randomUUID()}`;
      sent.add(version);
      lastSent = Date.now();
      link.send({
        type: "hello",
        version,
        slots: 1,
        platform: "linux",
        arch: "x64",
        node: "v20",
        runAs: null,
      });
    }
    const row = await env.DB.prepare("SELECT version FROM runners WHERE id = ?").bind(runnerId).first<Json>();
    return sent.has(String(row?.version));
  }).catch(() => {
    throw new Error(`the dispatcher never handled a hello of runner ${runnerId}`);
  });
}

describe("finish frames", () => {
  it("another tenant's runner sending a finish for your run id changes nothing: your runner's finish stands", async () => {
    const owner = await boardUser();
    const company = await createCompany(owner);
    const registered = await call<{ runner: Json; token: string }>(
      "POST",
      `/api/companies/${company.id}/runners`,
      { headers: owner.headers, body: { name: "mine" } },
    );
    const link = await openRunnerLink(registered.body.token);
    const intruder = await boardUser();
    const theirs = await createCompany(intruder);
    const foreign = await call<{ runner: Json; token: string }>(
      "POST",
      `/api/companies/${theirs.id}/runners`,
      { headers: intruder.headers, body: { name: "theirs" } },
    );
    const forger = await openRunnerLink(foreign.body.token);
    await wakeAgent(owner, company, "Worker");
    const run = await claimOne(link);

    // The runner's finish waits for its one log frame; meanwhile the forged one arrives.
    link.send({ type: "finish", runId: run.runId, exitCode: 0, timedOut: false, logFrames: 1 });
    await drained(link, String(registered.body.runner.id));
    forger.send({ type: "finish", runId: run.runId, exitCode: 1, timedOut: false, logFrames: 50 });
    forger.send({ type: "finish", runId: run.runId, exitCode: 1, timedOut: false, logFrames: 0 });
    await drained(forger, String(foreign.body.runner.id));
    expect((await runRow(run.runId))?.status).toBe("running");
    link.send({ type: "log", runId: run.runId, seq: 0, stream: "stdout", text: "done\n" });
    await eventually(async () => (await runRow(run.runId))?.status !== "running").catch(async () => {
      throw new Error(`the run did not end after its log: ${JSON.stringify(await runRow(run.runId))}`);
    });
    expect(await runRow(run.runId)).toMatchObject({ status: "succeeded", exit_code: 0, error_reason: null });

    link.socket.close(1000, "bye");
    forger.socket.close(1000, "bye");
    await drained(await openRunnerLink(registered.body.token), String(registered.body.runner.id));
    expect(await runRow(run.runId)).toMatchObject({ status: "succeeded", error_reason: null });
  });
});
