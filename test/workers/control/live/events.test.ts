// The dashboard's live sockets: GET /api/issues/{id}/events (the IssueDO's feed) and
// GET /api/companies/{id}/events (the company's CompanyFeed), over real WebSockets in workerd.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { issueObjectName } from "../../../../workers/control/issues";
import { companyFeed, LIVE_EVENTS_KEPT } from "../../../../workers/control/live";
import { BASE, call, fetchWorker } from "../../helpers";
import { seedAgent, seedCompany, seedIssue } from "../helpers";
import { claimOne, runnerFor } from "../runner-link";
import { events, listen, open, signedInOwner } from "./sockets";

async function comment(headers: Record<string, string>, issueId: string, body: string) {
  const res = await call<{ id: string }>("POST", `/api/issues/${issueId}/comments`, {
    headers,
    body: { body },
  });
  expect(res.status).toBe(201);
  return res.body;
}

async function patch(headers: Record<string, string>, issueId: string, body: Record<string, unknown>) {
  const res = await call("PATCH", `/api/issues/${issueId}`, { headers, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

describe("live sockets: who may listen", () => {
  it("needs credentials, a same-site Origin, an upgrade and a visible issue or company", async () => {
    const owner = await signedInOwner();
    const company = await seedCompany(owner);
    const issue = await seedIssue(company);
    const outsider = await signedInOwner();
    const theirs = await seedCompany(outsider);
    const paths = [`/api/issues/${issue.id}/events`, `/api/companies/${company.id}/events`];
    for (const path of paths) {
      expect((await open(path, {})).status, path).toBe(401);
      expect(
        (await open(path, { ...owner.cookieHeaders, Origin: "https://evil.example" })).status,
        path,
      ).toBe(403);
      expect((await open(path, { ...outsider.cookieHeaders, Origin: BASE })).status, path).toBe(404);
      // Not an upgrade: the issue's socket wants one; the company's URL is also its events page (issue 33).
      const plain = await fetchWorker(`${BASE}${path}`, { headers: owner.cookieHeaders });
      expect(plain.status, path).toBe(path.startsWith("/api/companies/") ? 200 : 426);
      expect((await open(`${path}?since=-1`, { ...owner.cookieHeaders, Origin: BASE })).status, path).toBe(
        400,
      );
      const allowed = await open(path, { ...owner.cookieHeaders, Origin: BASE });
      expect(allowed.status, path).toBe(101);
      allowed.webSocket?.accept();
      allowed.webSocket?.close(1000, "done");
    }
    // The outsider's own company answers them, and an unknown id is the same 404 as another tenant's.
    const own = await open(`/api/companies/${theirs.id}/events`, outsider.cookieHeaders);
    expect(own.status).toBe(101);
    own.webSocket?.accept();
    own.webSocket?.close(1000, "done");
    expect((await open(`/api/issues/${crypto.randomUUID()}/events`, owner.cookieHeaders)).status).toBe(404);
  });
});

describe("live sockets: what they carry", () => {
  it("tells the issue page about a comment and a status change, and the board about the change only", async () => {
    const owner = await signedInOwner();
    const company = await seedCompany(owner);
    const issue = await seedIssue(company, { status: "todo" });
    const page = await listen(`/api/issues/${issue.id}/events`, owner.cookieHeaders);
    const board = await listen(`/api/companies/${company.id}/events`, owner.cookieHeaders);
    expect(page.frames[0]).toEqual({ type: "hello", seq: 0, at: null });

    const written = await comment(owner.headers, issue.id, "Looks good");
    const commented = await page.next((f) => f.kind === "comment.added");
    expect(commented).toMatchObject({
      type: "event",
      seq: 1,
      issueId: issue.id,
      companyId: company.id,
      commentId: written.id,
    });

    await patch(owner.headers, issue.id, { status: "cancelled", title: "Renamed" });
    expect(await page.next((f) => f.kind === "issue.updated")).toMatchObject({
      seq: 2,
      status: "cancelled",
      title: "Renamed",
    });
    expect(await board.next((f) => f.kind === "issue.updated")).toMatchObject({
      seq: 1,
      issueId: issue.id,
      status: "cancelled",
    });
    // A new issue is the board's news; comments never are.
    const created = await call<{ id: string }>("POST", `/api/companies/${company.id}/issues`, {
      headers: owner.headers,
      body: { title: "Fresh" },
    });
    expect(created.status).toBe(201);
    expect(await board.next((f) => f.kind === "issue.created")).toMatchObject({
      seq: 2,
      issueId: created.body.id,
      title: "Fresh",
      status: "backlog",
    });
    expect(events(board).map((f) => f.kind)).toEqual(["issue.updated", "issue.created"]);
    // A refused change announces nothing.
    const refused = await call("PATCH", `/api/issues/${issue.id}`, {
      headers: owner.headers,
      body: { status: "no-such-status" },
    });
    expect(refused.status).toBe(400);
    await comment(owner.headers, issue.id, "after the refusal");
    expect((await page.next((f) => f.seq === 3)).kind).toBe("comment.added");
    expect(events(page).map((f) => f.seq)).toEqual([1, 2, 3]);
    page.socket.close(1000, "done");
    board.socket.close(1000, "done");
  });

  it("a reconnecting client gets what it missed after since=N, and reset when N cannot be served", async () => {
    const owner = await signedInOwner();
    const company = await seedCompany(owner);
    const issue = await seedIssue(company, { status: "todo" });
    const path = `/api/issues/${issue.id}/events`;
    const first = await listen(path, owner.cookieHeaders);
    await comment(owner.headers, issue.id, "one");
    const seen = await first.next((f) => f.type === "event");
    first.socket.close(1000, "tab asleep");

    await comment(owner.headers, issue.id, "two");
    await patch(owner.headers, issue.id, { status: "cancelled" });

    const again = await listen(`${path}?since=${seen.seq}`, owner.cookieHeaders);
    const caughtUp = await again.next((f) => f.kind === "issue.updated" && f.status === "cancelled");
    const missed = events(again);
    expect(again.frames[0]).toMatchObject({ type: "hello", seq: caughtUp.seq });
    expect(seen.seq).toBe(1);
    expect(missed.map((f) => [f.seq, f.kind])).toEqual([
      [2, "comment.added"],
      [3, "issue.updated"],
    ]);
    // Up to date: hello only. Ahead of the feed (it was never that far): reset.
    const current = await listen(`${path}?since=${caughtUp.seq}`, owner.cookieHeaders);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The hello says when the newest change happened: a page drawn just before it re-reads itself.
    expect(current.frames).toEqual([{ type: "hello", seq: caughtUp.seq, at: caughtUp.at }]);
    const ahead = await listen(`${path}?since=999`, owner.cookieHeaders);
    expect(await ahead.next((f) => f.type === "reset")).toEqual({ type: "reset", seq: caughtUp.seq });
    for (const link of [again, current, ahead]) link.socket.close(1000, "done");
  });

  it("an issue nobody ever watched keeps no log, yet a page's first hello still says when it changed", async () => {
    const owner = await signedInOwner();
    const company = await seedCompany(owner);
    const issue = await seedIssue(company, { status: "todo" });
    const before = Date.now();
    await comment(owner.headers, issue.id, "while nobody watches");
    // The issue's events, as its object (a shard of the company's issues) keeps them.
    const logged = () =>
      runInDurableObject(
        env.ISSUE.getByName(issueObjectName({ id: issue.id, companyId: company.id })),
        (_, state) => {
          const sql = state.storage.sql;
          if (sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'keyed_live_events'").toArray().length === 0)
            return 0;
          return sql
            .exec<{ n: number }>("SELECT count(*) AS n FROM keyed_live_events WHERE feed = ?", issue.id)
            .one().n;
        },
      );
    expect(await logged()).toBe(0);
    const page = await listen(`/api/issues/${issue.id}/events`, owner.cookieHeaders);
    const hello = await page.next((f) => f.type === "hello");
    expect(hello.seq).toBe(0);
    expect(hello.at).toBeGreaterThanOrEqual(before);
    // Watched once: from now on changes are numbered and kept for catching up.
    await comment(owner.headers, issue.id, "now watched");
    expect((await page.next((f) => f.type === "event")).seq).toBe(1);
    expect(await logged()).toBe(1);
    page.socket.close(1000, "done");
  });

  it("two issues held by the same object keep their own numbers and their own pages", async () => {
    const owner = await signedInOwner();
    const company = await seedCompany(owner);
    // Issues of one company share an object by a hash of their ids: make two that do.
    const byObject = new Map<string, string>();
    let pair: [string, string] | undefined;
    while (!pair) {
      const { id } = await seedIssue(company, { status: "todo" });
      const name = issueObjectName({ id, companyId: company.id });
      const other = byObject.get(name);
      if (other) pair = [other, id];
      else byObject.set(name, id);
    }
    const [first, second] = pair;
    const firstPage = await listen(`/api/issues/${first}/events`, owner.cookieHeaders);
    const secondPage = await listen(`/api/issues/${second}/events`, owner.cookieHeaders);
    await firstPage.next((f) => f.type === "hello");
    await secondPage.next((f) => f.type === "hello");
    await comment(owner.headers, first, "on the first");
    await comment(owner.headers, first, "on the first again");
    await comment(owner.headers, second, "on the second");
    const onSecond = await secondPage.next((f) => f.type === "event");
    expect(onSecond).toMatchObject({ seq: 1, kind: "comment.added", issueId: second });
    await firstPage.next((f) => f.type === "event" && f.seq === 2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(events(firstPage).map((f) => [f.seq, f.issueId])).toEqual([
      [1, first],
      [2, first],
    ]);
    expect(events(secondPage).map((f) => [f.seq, f.issueId])).toEqual([[1, second]]);
    // Catching up reads the issue's own log: the second issue's page missed nothing of the first's.
    const again = await listen(`/api/issues/${second}/events?since=0`, owner.cookieHeaders);
    await again.next((f) => f.type === "event");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(events(again).map((f) => [f.seq, f.issueId])).toEqual([[1, second]]);
    for (const link of [firstPage, secondPage, again]) link.socket.close(1000, "done");
  });

  it("tells the issue page a run of its issue started, wrote output and ended", async () => {
    const owner = await signedInOwner();
    const company = await seedCompany(owner);
    await seedAgent(company.id, { name: "Worker", adapterConfig: { command: "true" } });
    const issue = await seedIssue(company, { status: "todo" });
    const page = await listen(`/api/issues/${issue.id}/events`, owner.cookieHeaders);
    await comment(owner.headers, issue.id, "@Worker look");
    const runner = await runnerFor({ ...owner, headers: owner.cookieHeaders }, company.id);
    const run = await claimOne(runner);
    expect(await page.next((f) => f.kind === "run.started")).toMatchObject({
      runId: run.runId,
      status: "running",
    });
    for (let seq = 0; seq < 5; seq++)
      runner.send({ type: "log", runId: run.runId, seq, stream: "stdout", text: `line ${seq}\n` });
    expect(await page.next((f) => f.kind === "run.log")).toMatchObject({ runId: run.runId });
    runner.send({ type: "finish", runId: run.runId, exitCode: 0, timedOut: false, logFrames: 5 });
    expect(await page.next((f) => f.kind === "run.ended")).toMatchObject({
      runId: run.runId,
      status: "succeeded",
    });
    // Five frames close together are one announcement, not five.
    expect(events(page).filter((f) => f.kind === "run.log")).toHaveLength(1);
    page.socket.close(1000, "done");
    runner.socket.close(1000, "done");
  });

  it("announces a run woken for no issue on its company's feed, to that run's listeners only", async () => {
    const owner = await signedInOwner();
    const company = await seedCompany(owner);
    const agent = await seedAgent(company.id, { name: "Loner", adapterConfig: { command: "true" } });
    const invoke = () =>
      call<{ id: string }>("POST", `/api/agents/${agent.id}/heartbeat/invoke`, { headers: owner.headers });
    const invoked = await invoke();
    expect(invoked.status, JSON.stringify(invoked.body)).toBe(202);
    const runId = invoked.body.id;
    const feed = `/api/companies/${company.id}/events`;
    const board = await listen(feed, owner.cookieHeaders);
    const runPage = await listen(`${feed}?runId=${runId}`, owner.cookieHeaders);
    const otherRun = await listen(`${feed}?runId=${crypto.randomUUID()}`, owner.cookieHeaders);

    const runner = await runnerFor({ ...owner, headers: owner.cookieHeaders }, company.id);
    expect((await claimOne(runner)).runId).toBe(runId);
    expect(await runPage.next((f) => f.kind === "run.started")).toMatchObject({
      runId,
      issueId: null,
      companyId: company.id,
      status: "running",
    });
    runner.send({ type: "log", runId, seq: 0, stream: "stdout", text: "alone\n" });
    await runPage.next((f) => f.kind === "run.log");
    runner.send({ type: "finish", runId, exitCode: 0, timedOut: false, logFrames: 1 });
    expect(await runPage.next((f) => f.kind === "run.ended")).toMatchObject({ runId, status: "succeeded" });
    // A queued run cancelled by hand ends too, announced to its own listeners.
    const queued = await invoke();
    const queuedPage = await listen(`${feed}?runId=${queued.body.id}`, owner.cookieHeaders);
    const cancelled = await call("POST", `/api/heartbeat-runs/${queued.body.id}/cancel`, {
      headers: owner.headers,
    });
    expect(cancelled.status).toBe(200);
    expect(await queuedPage.next((f) => f.kind === "run.ended")).toMatchObject({ status: "cancelled" });

    // The board hears about issues, never runs; a page for another run hears nothing.
    const created = await call<{ id: string }>("POST", `/api/companies/${company.id}/issues`, {
      headers: owner.headers,
      body: { title: "Board news" },
    });
    expect(await board.next((f) => f.kind === "issue.created")).toMatchObject({ issueId: created.body.id });
    expect(events(board).map((f) => f.kind)).toEqual(["issue.created"]);
    expect(events(runPage).map((f) => f.kind)).toEqual(["run.started", "run.log", "run.ended"]);
    expect(events(otherRun)).toEqual([]);
    // Catching up keeps the filter: the run's three events, not the queued run's nor the issue's.
    const caughtUp = await listen(`${feed}?runId=${runId}&since=0`, owner.cookieHeaders);
    await caughtUp.next((f) => f.kind === "run.ended");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(events(caughtUp).map((f) => [f.seq, f.kind])).toEqual(events(runPage).map((f) => [f.seq, f.kind]));
    for (const link of [board, runPage, otherRun, queuedPage, caughtUp, runner])
      link.socket.close(1000, "done");
  });

  it("a client further behind than the feed keeps is told to reset", async () => {
    const owner = await signedInOwner();
    const company = await seedCompany(owner);
    const feed = companyFeed(env, company.id);
    const change = { kind: "issue.updated", companyId: company.id, issueId: crypto.randomUUID() } as const;
    for (let i = 0; i <= LIVE_EVENTS_KEPT; i++) await feed.publish(change);
    const path = `/api/companies/${company.id}/events`;
    const behind = await listen(`${path}?since=0`, owner.cookieHeaders);
    expect(await behind.next((f) => f.type === "reset")).toEqual({
      type: "reset",
      seq: LIVE_EVENTS_KEPT + 1,
    });
    expect(events(behind)).toEqual([]);
    const justInside = await listen(`${path}?since=1`, owner.cookieHeaders);
    await justInside.next((f) => f.type === "event" && f.seq === LIVE_EVENTS_KEPT + 1);
    expect(events(justInside)).toHaveLength(LIVE_EVENTS_KEPT);
    for (const link of [behind, justInside]) link.socket.close(1000, "done");
  });
});
