// A company's control-plane events from a cursor (issue 33, docs/events.md): the page and the stream
// read the company's activity log in commit order, each event once; other tenants see none of it.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { asKey, call } from "../../helpers";
import { boardUser, seedAgent, seedCompany } from "../helpers";
import { joinAs } from "../members/fixtures";
import { claimOne, runnerFor } from "../runner-link";
import { comment, createIssue, framesOf, openStream, page, readAll, stream } from "./fixtures";

/** The company's activity entries in the order they were written (the truth the log is read against). */
async function written(companyId: string): Promise<string[]> {
  const rows = await env.DB.prepare("SELECT id FROM activity_log WHERE company_id = ? ORDER BY seq")
    .bind(companyId)
    .all<{ id: string }>();
  return rows.results.map((row) => row.id);
}

/** `count` more entries in the company's log, copied from its newest one (as a busy company's backlog). */
async function backlog(companyId: string, count: number): Promise<void> {
  await env.DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO activity_log (seq, id, company_id, actor_type, actor_id, action, entity_type, entity_id, details, created_at)
     SELECT NULL, 'backlog-' || ? || '-' || n.i, t.company_id, t.actor_type, t.actor_id, 'issue.updated',
       t.entity_type, t.entity_id, t.details, t.created_at + n.i
     FROM n, (SELECT * FROM activity_log WHERE company_id = ? ORDER BY seq DESC LIMIT 1) t`,
  )
    .bind(count, companyId, companyId)
    .run();
}

async function tenant() {
  const owner = await boardUser();
  const company = await seedCompany(owner);
  return { owner, company };
}

describe("GET /api/companies/{id}/events", () => {
  it("reads every event once, oldest first, across pages; what was written while away follows the last cursor", async () => {
    const { owner, company } = await tenant();
    const other = await tenant();
    const titles = Array.from({ length: 7 }, (_, i) => `Quarterly plan ${i}`);
    const ids: string[] = [];
    for (const title of titles) {
      ids.push(await createIssue(company, owner.headers, title));
      // Another tenant writing at the same time: none of it belongs in this company's log.
      await createIssue(other.company, other.owner.headers, `Elsewhere ${title}`);
    }
    await comment(ids[0] as string, owner.headers, "First comment");

    const first = await readAll(company, owner.headers, 3);
    expect(first.events.map((e) => e.id)).toEqual(await written(company.id));
    expect(new Set(first.events.map((e) => e.id)).size).toBe(first.events.length);
    const created = first.events.filter((e) => e.event === "issue.created");
    expect(created.map((e) => e.data.entityId)).toEqual(ids);
    expect(first.events.at(-1)?.event).toBe("issue.comment_added");
    expect(first.events.every((e) => e.companyId === company.id)).toBe(true);
    const cursors = first.events.map((e) => Number(e.cursor));
    expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
    // The same entries the activity list shows, in the opposite order.
    const activity = await call<Array<{ id: string }>>(
      "GET",
      `/api/companies/${company.id}/activity?limit=200`,
      {
        headers: owner.headers,
      },
    );
    expect(new Set(activity.body.map((a) => a.id))).toEqual(new Set(first.events.map((e) => e.id)));

    // The consumer goes away; the company keeps working; it comes back with its last cursor.
    const later = await createIssue(company, owner.headers, "Written while the consumer was away");
    await comment(later, owner.headers, "Also while away");
    const resumed = await readAll(company, owner.headers, 1000, first.next);
    expect(resumed.events.map((e) => e.event)).toEqual(["issue.created", "issue.comment_added"]);
    expect(resumed.events[0]?.data.entityId).toBe(later);
    expect(Number(resumed.events[0]?.cursor)).toBeGreaterThan(Number(first.next));
  });

  it("is read by every role and by the company's agents; another tenant's company is a 404", async () => {
    const { owner, company } = await tenant();
    await createIssue(company, owner.headers, "Visible to the whole company");
    const viewer = await joinAs(company, "viewer");
    const agent = await seedAgent(company.id);
    for (const headers of [owner.headers, viewer.headers, agent.headers]) {
      const res = await page(company, headers, "after=0");
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.events.map((e) => e.event)).toContain("issue.created");
    }
    const stranger = await boardUser();
    const elsewhere = await seedCompany(stranger);
    const foreignAgent = await seedAgent(elsewhere.id);
    for (const headers of [stranger.headers, foreignAgent.headers]) {
      const res = await page(company, headers, "after=0");
      expect(res.status).toBe(404);
      expect(JSON.stringify(res.body)).not.toContain("Visible to the whole company");
    }
    // A key limited to another company is refused too.
    const limited = await call<{ data: { key: string } }>("POST", "/api/user/keys", {
      headers: owner.headers,
      body: { name: "elsewhere only", scopes: ["read"], companyId: (await seedCompany(owner)).id },
    });
    expect(limited.status, JSON.stringify(limited.body)).toBe(201);
    const refused = await page(company, asKey(limited.body.data.key), "after=0");
    expect(refused.status).toBe(404);
  });

  it("refuses a malformed cursor or a limit outside 1-1000 with a 400, and an empty page keeps the cursor", async () => {
    const { owner, company } = await tenant();
    for (const query of ["after=abc", "after=-1", "after=1.5", "limit=0", "limit=1001", "limit=ten"]) {
      const res = await page(company, owner.headers, query);
      expect(res.status, query).toBe(400);
    }
    const empty = await page(company, owner.headers, "after=999999999&limit=1000");
    expect(empty.status).toBe(200);
    expect(empty.body.data).toEqual({ events: [], next: "999999999" });
  });
});

describe("what the events cover", () => {
  it("a heartbeat run starting and ending, logged in the transaction that moves it", async () => {
    const { owner, company } = await tenant();
    const agent = await seedAgent(company.id, {
      name: "Runner",
      adapterConfig: { command: "node", args: ["agent.mjs"], cwd: "/work" },
    });
    const issue = await createIssue(company, owner.headers, "Needs the agent");
    await comment(issue, owner.headers, "@Runner look");
    const link = await runnerFor(owner, company.id);
    const run = await claimOne(link);
    link.send({ type: "finish", runId: run.runId, exitCode: 0, timedOut: false, logFrames: 0 });
    await expect
      .poll(async () => (await readAll(company, owner.headers, 1000)).events.map((e) => e.event))
      .toContain("heartbeat_run.ended");
    const runEvents = (await readAll(company, owner.headers, 1000)).events.filter(
      (e) => e.data.entityId === run.runId,
    );
    expect(runEvents.map((e) => [e.event, e.data.details.status])).toEqual([
      ["heartbeat_run.started", "running"],
      ["heartbeat_run.ended", "succeeded"],
    ]);
    expect(runEvents[0]?.data.details).toMatchObject({ agentId: agent.id, issueId: issue });
    expect(runEvents[0]?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    link.socket.close(1000, "done");
  });
});

describe("GET /api/companies/{id}/events/stream", () => {
  it("replays from the cursor while writes race it, then follows: each event once, in order", async () => {
    const { owner, company } = await tenant();
    await createIssue(company, owner.headers, "Backlog");
    await backlog(company.id, 12_000);
    const live = await stream(company, owner.headers, "0");
    // Written while the stream replays (many reads of D1, each a moment in which the object takes other
    // calls): every write nudges the stream mid-replay, and each must land once, in the replay or after.
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => createIssue(company, owner.headers, `Racing ${i}`)),
    );
    const done = await createIssue(company, owner.headers, "Last one");
    await live.next((frame) => (frame.data as { entityId?: string } | undefined)?.entityId === done);
    const log = await written(company.id);
    await expect.poll(() => framesOf(live).length).toBeGreaterThanOrEqual(log.length);
    expect(framesOf(live).map((e) => e.id)).toEqual(log);

    // Reconnecting with the last cursor seen gives only what followed it.
    const last = String(framesOf(live).at(-1)?.cursor);
    live.socket.close(1000, "done");
    const again = await stream(company, owner.headers, last);
    const next = await createIssue(company, owner.headers, "After reconnecting");
    await again.next((frame) => (frame.data as { entityId?: string } | undefined)?.entityId === next);
    expect(framesOf(again).map((e) => e.event)).toEqual(["issue.created"]);
    again.socket.close(1000, "done");
  });

  it("refuses a plain GET (426), a bad cursor (400) and another tenant (404)", async () => {
    const { owner, company } = await tenant();
    const plain = await call("GET", `/api/companies/${company.id}/events/stream`, { headers: owner.headers });
    expect(plain.status).toBe(426);
    expect((await openStream(company, owner.headers, "x1")).status).toBe(400);
    const stranger = await boardUser();
    expect((await openStream(company, stranger.headers, "0")).status).toBe(404);
  });

  it("closes when the member is removed (4403) or the key that opened it is revoked (4401)", async () => {
    const { owner, company } = await tenant();
    await createIssue(company, owner.headers, "Something to replay");
    const member = await joinAs(company, "member");
    const memberStream = await stream(company, member.headers);
    await memberStream.next((frame) => frame.event === "issue.created");
    const removed = await call("DELETE", `/api/companies/${company.id}/members/${member.userId}`, {
      headers: owner.headers,
    });
    expect(removed.status).toBe(204);
    expect((await memberStream.closedWith(2_000)).code).toBe(4403);

    const created = await call<{ data: { id: string; key: string } }>("POST", "/api/user/keys", {
      headers: owner.headers,
      body: { name: "events reader", scopes: ["read"], companyId: company.id },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const keyStream = await stream(company, asKey(created.body.data.key));
    await keyStream.next((frame) => frame.event === "issue.created");
    const revoked = await call("DELETE", `/api/user/keys/${created.body.data.id}`, {
      headers: owner.headers,
    });
    expect(revoked.status).toBe(200);
    expect((await keyStream.closedWith(2_000)).code).toBe(4401);
    // A write after the cut reaches nobody who lost access.
    await createIssue(company, owner.headers, "After the cut");
    expect(JSON.stringify(memberStream.frames)).not.toContain("After the cut");
  });
});
