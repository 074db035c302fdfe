// The write budget (issue 31, docs/control-plane-internals.md "Write budget"): what each control-plane
// operation costs in D1 round trips and Durable Object calls, counted by the data layer
// (workers/meter/meter.ts), background work (waitUntil) included. A structural check that does not
// depend on the machine's speed: a change that adds a statement or a hop to a write fails here, and
// the ceilings only ever come down. Each request runs after one that warmed the isolate's caches (the
// key, the company), as on a Worker that is serving.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { forgetAgentKey } from "../../../workers/auth/agent-key-reads";
import { sha256Hex } from "../../../workers/auth/crypto";
import { userKeyReads } from "../../../workers/auth/user-key-reads";
import { nudgesSkipped } from "../../../workers/control/live";
import { database } from "../../../workers/db/client";
import { issues } from "../../../workers/db/schema";
import { type MeterReading, meterReading, meterSince } from "../../../workers/meter/meter";
import { call, type JsonResponse } from "../helpers";
import { eventually } from "../patience";
import {
  addMembership,
  boardUser,
  type SeededAgent,
  type SeededCompany,
  seedAgent,
  seedCompany,
  seedIssue,
} from "./helpers";

interface Metered {
  response: JsonResponse;
  cost: MeterReading;
}

async function metered(work: () => Promise<JsonResponse>): Promise<Metered> {
  const start = meterReading();
  const response = await work();
  return { response, cost: meterSince(start) };
}

let company: SeededCompany;
let agent: SeededAgent;
let owner: Awaited<ReturnType<typeof boardUser>>;

beforeAll(async () => {
  owner = await boardUser();
  company = await seedCompany(owner);
  agent = await seedAgent(company.id);
  expect((await call("GET", `/api/companies/${company.id}`, { headers: owner.headers })).status).toBe(200);
  expect((await call("GET", "/api/agents/me", { headers: agent.headers })).status).toBe(200);
});

const assigned = () => seedIssue(company, { status: "todo", assigneeAgentId: agent.id });

/**
 * A write whose nudge finds no board page or event stream open: the isolate then skips the company's
 * nudges for a moment (UNWATCHED_MEMORY_MS), as a serving Worker does for a company nobody watches.
 * Written just before the measured request, so that moment never runs out in between.
 */
async function unwatchedCompany(): Promise<void> {
  const res = await call("POST", `/api/companies/${company.id}/issues`, {
    body: { title: "Warms the board's memory" },
    headers: agent.headers,
  });
  expect(res.status).toBe(201);
  // The nudge runs after the answer (waitUntil): its call must not land in the next measurement.
  await eventually(async () => nudgesSkipped(company.id));
}

/**
 * The Keyring answers for the key now (this isolate's recent answer is dropped, then a read asks), so
 * the measured write, made right after, starts from a recent answer as on a serving Worker, where a
 * key's writes ask the Keyring at most once a second. Guarded writes (create, checkout) then make no
 * Keyring call: their commit checks the key (workers/auth/credential-guard.ts).
 */
async function keyJustResolved(who: { key: string; headers: Record<string, string> }): Promise<void> {
  const hash = await sha256Hex(who.key);
  forgetAgentKey(hash);
  userKeyReads.forgetKey(hash);
  const path = who === agent ? "/api/agents/me" : `/api/companies/${company.id}`;
  expect((await call("GET", path, { headers: who.headers })).status).toBe(200);
}

/**
 * A first write by the owner, which the viewer gate confirms in D1: this isolate then remembers them
 * as a writer of the company for a second, so the measured write after it skips that read.
 */
async function confirmedWriter(path: string, body: Record<string, unknown>): Promise<void> {
  expect((await call("POST", path, { body, headers: owner.headers })).status).toBe(201);
}

describe("the meter", () => {
  it("counts a statement run alone as one round trip and a batch of three as one", async () => {
    const db = database(env.DB);
    const start = meterReading();
    await db.select({ id: issues.id }).from(issues).limit(1);
    expect(meterSince(start)).toEqual({ d1RoundTrips: 1, d1Statements: 1, doCalls: 0 });
    const probe = db.select({ id: issues.id }).from(issues).limit(1);
    await db.batch([probe, probe, probe]);
    expect(meterSince(start)).toEqual({ d1RoundTrips: 2, d1Statements: 4, doCalls: 0 });
  });
});

describe("what each operation costs at most", () => {
  it("reads an issue it has read before from its Durable Object's cache: no round trip, one call", async () => {
    const issue = await assigned();
    await call("GET", `/api/issues/${issue.id}`, { headers: agent.headers });
    const read = await metered(() => call("GET", `/api/issues/${issue.id}`, { headers: agent.headers }));
    expect(read.response.status).toBe(200);
    expect(read.cost).toEqual({ d1RoundTrips: 0, d1Statements: 0, doCalls: 1 });
  });

  it("an agent creates an issue in one round trip, the batch of the write, and no call (2, then 1 before)", async () => {
    await unwatchedCompany();
    await keyJustResolved(agent);
    const create = await metered(() =>
      call("POST", `/api/companies/${company.id}/issues`, {
        body: { title: "Subtask", status: "todo" },
        headers: agent.headers,
      }),
    );
    expect(create.response.status).toBe(201);
    expect(create.cost.d1RoundTrips).toBeLessThanOrEqual(1);
    // The batch: counter, numbered insert answering its row, activity, the key's guard (the insert
    // was re-read: 4, and the Keyring was asked: one call).
    expect(create.cost.d1Statements).toBeLessThanOrEqual(4);
    expect(create.cost.doCalls).toBe(0);
  });

  it("a person creates an issue in one round trip, the batch, and no call (2 and 2, then 2 and 1 before)", async () => {
    await unwatchedCompany();
    await keyJustResolved(owner);
    await confirmedWriter(`/api/companies/${company.id}/issues`, { title: "Warms the membership" });
    const create = await metered(() =>
      call("POST", `/api/companies/${company.id}/issues`, {
        body: { title: "Budgeted", status: "todo" },
        headers: owner.headers,
      }),
    );
    expect(create.response.status).toBe(201);
    // The membership is checked in the batch too (the guard's memberOf).
    expect(create.cost.d1RoundTrips).toBe(1);
    expect(create.cost.doCalls).toBe(0);
  });

  it("checks out an issue nobody has read yet in 2 round trips (locate it, the claim) and 1 call, its object (3 and 3, then 2 and 2 before)", async () => {
    const issue = await assigned();
    await unwatchedCompany();
    await keyJustResolved(agent);
    const checkout = await metered(() =>
      call("POST", `/api/issues/${issue.id}/checkout`, {
        body: { agentId: agent.id, expectedStatuses: ["todo"] },
        headers: agent.headers,
      }),
    );
    expect(checkout.response.status).toBe(200);
    // Locate, then one batch in the IssueDO that reads the row as it was and claims it (3 before).
    expect(checkout.cost.d1RoundTrips).toBeLessThanOrEqual(2);
    expect(checkout.cost.doCalls).toBeLessThanOrEqual(1);
  });

  it("checks out an issue it has read in one round trip, the batch that reads, claims and logs it, and 1 call", async () => {
    const issue = await assigned();
    await call("GET", `/api/issues/${issue.id}`, { headers: agent.headers });
    await unwatchedCompany();
    await keyJustResolved(agent);
    const checkout = await metered(() =>
      call("POST", `/api/issues/${issue.id}/checkout`, {
        body: { agentId: agent.id, expectedStatuses: ["todo"] },
        headers: agent.headers,
      }),
    );
    expect(checkout.response.status).toBe(200);
    expect(checkout.cost.d1RoundTrips).toBe(1);
    expect(checkout.cost.doCalls).toBeLessThanOrEqual(1);
  });

  it("comments on an issue it has read in 2 round trips (its row with what the comment reads, the batch) and 1 call, its object (3 and 2 before)", async () => {
    const issue = await assigned();
    await call("GET", `/api/issues/${issue.id}`, { headers: agent.headers });
    await keyJustResolved(agent);
    const comment = await metered(() =>
      call("POST", `/api/issues/${issue.id}/comments`, { body: { body: "On it" }, headers: agent.headers }),
    );
    expect(comment.response.status).toBe(201);
    expect(comment.cost.d1RoundTrips).toBeLessThanOrEqual(2);
    expect(comment.cost.doCalls).toBeLessThanOrEqual(1);
  });

  it("a person comments on an issue they have read in 2 round trips, like an agent: the membership is checked in the batch (3 before)", async () => {
    // Nobody assigned: the comment wakes no agent, whose run would be claimed in the background.
    const issue = await seedIssue(company, { status: "todo" });
    await keyJustResolved(owner);
    await call("GET", `/api/issues/${issue.id}`, { headers: owner.headers });
    await confirmedWriter(`/api/issues/${issue.id}/comments`, { body: "Warms the membership" });
    const comment = await metered(() =>
      call("POST", `/api/issues/${issue.id}/comments`, {
        body: { body: "Looks good" },
        headers: owner.headers,
      }),
    );
    expect(comment.response.status).toBe(201);
    expect(comment.cost.d1RoundTrips).toBe(2);
    expect(comment.cost.doCalls).toBeLessThanOrEqual(1);
  });

  it("a mention of a person who is not on the company line costs 3 round trips, one of them to find nobody on the line (9, 7, then 4 before), and 2 calls (3 before)", async () => {
    const ada = await boardUser();
    await addMembership(company.id, ada.userId, "member");
    await env.DB.prepare("UPDATE users SET name = ? WHERE id = ?").bind("Ada Budget", ada.userId).run();
    const issue = await assigned();
    await call("GET", `/api/issues/${issue.id}`, { headers: agent.headers });
    await keyJustResolved(agent);
    const comment = await metered(() =>
      call("POST", `/api/issues/${issue.id}/comments`, {
        body: { body: "@Ada Budget look" },
        headers: agent.headers,
      }),
    );
    expect(comment.response.status).toBe(201);
    const notified = await env.DB.prepare("SELECT count(*) AS n FROM notifications WHERE issue_id = ?")
      .bind(issue.id)
      .first<{ n: number }>();
    expect(notified?.n).toBe(1);
    expect(comment.cost.d1RoundTrips).toBeLessThanOrEqual(3);
    // The second call tells the person's open pages (their inbox count) at once.
    expect(comment.cost.doCalls).toBeLessThanOrEqual(2);
  });

  it("updates the status of an issue it has read, with a comment, in 2 round trips (its row with its reads, the write) and 1 call, its object (6 and 3, then 3 and 2, then 3 and 1 before)", async () => {
    const issue = await seedIssue(company, { status: "in_progress", assigneeAgentId: agent.id });
    await call("GET", `/api/issues/${issue.id}`, { headers: agent.headers });
    await unwatchedCompany();
    await keyJustResolved(agent);
    const update = await metered(() =>
      call("PATCH", `/api/issues/${issue.id}`, {
        body: { status: "in_review", comment: "Ready" },
        headers: agent.headers,
      }),
    );
    expect(update.response.status).toBe(200);
    expect(update.cost.d1RoundTrips).toBeLessThanOrEqual(2);
    expect(update.cost.doCalls).toBeLessThanOrEqual(1);
  });
});
