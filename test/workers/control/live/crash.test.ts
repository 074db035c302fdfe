// Issue 31: a crash between a write's commit and its announcement (the isolate dies, the call to the
// company's feed throws, a deploy cuts it off) must still end with its derived work done exactly
// once: the search index and the activity row (same D1 batch as the write), the board's live socket
// and the company's event stream opened before the write (docs/decisions.md, "The board follows the
// activity log").
import { afterEach, describe, expect, it } from "vitest";
import { loseAnnouncements } from "../../../../workers/control/live";
import type { Link } from "../../fake-bridge";
import { call } from "../../helpers";
import { type CompanyEvent, framesOf, page, stream } from "../events/fixtures";
import { activityOf, seedCompany, seedIssue } from "../helpers";
import { events, listen, signedInOwner } from "./sockets";

let restore: (() => void) | null = null;
afterEach(() => restore?.());

async function createIssue(companyId: string, headers: Record<string, string>, title: string) {
  const res = await call<{ id: string }>("POST", `/api/companies/${companyId}/issues`, {
    headers,
    body: { title },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

/** The board's issue events as (kind, issue) pairs, in the order the socket received them. */
const boardNews = (board: Link) =>
  events(board).map((frame) => `${String(frame.kind)} ${String(frame.issueId)}`);

const streamed = (live: Link) =>
  framesOf(live).map((event: CompanyEvent) => `${event.event} ${event.data.entityId}`);

describe("a crash between a write and its announcement", () => {
  it("still reaches the open board and event stream exactly once and in order; search and activity hold it once", async () => {
    const owner = await signedInOwner();
    const company = await seedCompany(owner);
    const existing = await seedIssue(company, { status: "todo" });
    const before = await page(company, owner.headers, "after=0&limit=1000");
    const cursor = before.body.data.next;
    const board = await listen(`/api/companies/${company.id}/events`, owner.cookieHeaders);
    const live = await stream(company, owner.headers, cursor);

    // Both writes commit; everything each would announce afterwards is lost.
    restore = loseAnnouncements();
    const lost = await createIssue(company.id, owner.headers, "Zephyrine lost announcement");
    const patched = await call("PATCH", `/api/issues/${existing.id}`, {
      headers: owner.headers,
      body: { status: "cancelled" },
    });
    expect(patched.status).toBe(200);
    restore();

    // A later write announced as usual: once it arrives, anything before it has had its turn.
    const later = await createIssue(company.id, owner.headers, "Announced as usual");
    await board.next((frame) => frame.kind === "issue.created" && frame.issueId === later);
    expect(boardNews(board)).toEqual([
      `issue.created ${lost}`,
      `issue.updated ${existing.id}`,
      `issue.created ${later}`,
    ]);
    expect(events(board)[0]).toMatchObject({ title: "Zephyrine lost announcement", status: "backlog" });
    expect(events(board)[1]).toMatchObject({ status: "cancelled" });
    const seqs = events(board).map((frame) => Number(frame.seq));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));

    await live.next((frame) => (frame.data as { entityId?: string } | undefined)?.entityId === later);
    expect(streamed(live)).toEqual([
      `issue.created ${lost}`,
      `issue.updated ${existing.id}`,
      `issue.created ${later}`,
    ]);

    const search = await call<Array<{ id: string }>>(
      "GET",
      `/api/companies/${company.id}/issues?q=${encodeURIComponent("Zephyrine")}`,
      { headers: owner.headers },
    );
    expect(search.status).toBe(200);
    expect(search.body.map((issue) => issue.id)).toEqual([lost]);
    expect((await activityOf(lost)).map((row) => row.action)).toEqual(["issue.created"]);
    board.socket.close(1000, "done");
    live.socket.close(1000, "done");
  });
});

describe("a lost announcement and no write after it", () => {
  it("reaches the open board by its own look at the log, and a client coming back hears it once", async () => {
    const owner = await signedInOwner();
    const company = await seedCompany(owner);
    const board = await listen(`/api/companies/${company.id}/events`, owner.cookieHeaders);
    const hello = Number(board.frames[0]?.seq);

    restore = loseAnnouncements();
    const lost = await createIssue(company.id, owner.headers, "Nobody announced me");
    restore();

    // Nothing nudges the board: only its own look at the log, while the page is open, finds it.
    const heard = await board.next((frame) => frame.kind === "issue.created");
    expect(heard).toMatchObject({ issueId: lost, title: "Nobody announced me" });
    board.socket.close(1000, "done");
    // A page that reconnects from before it is told once, by the feed's catch-up.
    const again = await listen(`/api/companies/${company.id}/events?since=${hello}`, owner.cookieHeaders);
    await again.next((frame) => frame.kind === "issue.created");
    expect(boardNews(again)).toEqual([`issue.created ${lost}`]);
    again.socket.close(1000, "done");
  });
});
