// A company's events past retention (issue 33): the deployment's ACTIVITY_RETENTION_DAYS prunes the
// activity log, and a consumer whose cursor is older than what is kept is told so (410) with the
// oldest cursor to read from, on the page and on the stream alike. Its own file: the horizon is the
// whole log's, so pruning here must not meet the other suites' cursors.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { pruneExpiredActivity } from "../../../../workers/control/events/log";
import { database } from "../../../../workers/db/client";
import { call } from "../../helpers";
import { boardUser, seedCompany } from "../helpers";
import { createIssue, openStream, page, readAll, stream } from "./fixtures";

const DAY = 86_400_000;

async function ageEntries(entityIds: string[], ageMs: number): Promise<void> {
  for (const id of entityIds)
    await env.DB.prepare("UPDATE activity_log SET created_at = ? WHERE entity_id = ?")
      .bind(Date.now() - ageMs, id)
      .run();
}

describe("company events past retention", () => {
  it("keeps everything without a retention, prunes past it, and answers 410 with the oldest cursor", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    const old = [
      await createIssue(company, owner.headers, "Old one"),
      await createIssue(company, owner.headers, "Old two"),
    ];
    const kept = await createIssue(company, owner.headers, "Still kept");
    await ageEntries(old, 10 * DAY);
    const before = await readAll(company, owner.headers, 1000);

    // No retention set (the default), or a nonsense one: nothing goes.
    const db = database(env.DB);
    expect(await pruneExpiredActivity(db, undefined, Date.now())).toBe(0);
    expect(await pruneExpiredActivity(db, "soon", Date.now())).toBe(0);
    expect((await readAll(company, owner.headers, 1000)).events).toEqual(before.events);

    expect(await pruneExpiredActivity(db, "7", Date.now())).toBe(2);
    const cursorOf = (entityId: string | undefined) =>
      Number(before.events.find((e) => e.data.entityId === entityId)?.cursor);

    const gone = await call<{ error: string; details: { oldestCursor: string } }>(
      "GET",
      `/api/companies/${company.id}/events?after=0`,
      { headers: owner.headers },
    );
    expect(gone.status).toBe(410);
    // The oldest readable cursor lies past what was pruned and before what was kept.
    const oldest = String(gone.headers.get("X-Oldest-Cursor"));
    expect(Number(oldest)).toBeGreaterThanOrEqual(cursorOf(old[1]));
    expect(Number(oldest)).toBeLessThan(cursorOf(kept));
    expect(gone.body.details.oldestCursor).toBe(oldest);
    const streamGone = await openStream(company, owner.headers, "0");
    expect(streamGone.status).toBe(410);
    expect(streamGone.headers.get("X-Oldest-Cursor")).toBe(oldest);

    // From the oldest cursor: what is kept, nothing lost after it, on the page and the stream.
    const rest = await readAll(company, owner.headers, 1000, oldest);
    expect(rest.events.map((e) => e.data.entityId)).toEqual([kept]);
    const live = await stream(company, owner.headers, oldest);
    await live.next((frame) => (frame.data as { entityId?: string } | undefined)?.entityId === kept);
    expect(live.frames).toHaveLength(1);
    live.socket.close(1000, "done");
    // A cursor at or after the horizon still reads normally (an empty page keeps it).
    const latest = await page(company, owner.headers, `after=${rest.next}`);
    expect(latest.status).toBe(200);
    expect(latest.body.data).toEqual({ events: [], next: rest.next });
  });

  it("closes a stream that retention overtook (4410) instead of skipping what it had not been sent", async () => {
    const owner = await boardUser();
    const company = await seedCompany(owner);
    await createIssue(company, owner.headers, "Sent before the prune");
    // Its newest cursor (the first test's prune left a horizon, so after=0 would be 410 here).
    const newest = await env.DB.prepare("SELECT max(seq) AS seq FROM activity_log WHERE company_id = ?")
      .bind(company.id)
      .first<{ seq: number }>();
    const next = String(newest?.seq);
    const live = await stream(company, owner.headers, next);
    // Entries past the stream's cursor were pruned before it got them (as a prune landing while a
    // slow stream lags behind would): the horizon is moved past it, then a change wakes the stream.
    await env.DB.prepare(
      "INSERT INTO event_log_horizons (log, pruned_through_seq) VALUES ('activity', ?) ON CONFLICT (log) DO UPDATE SET pruned_through_seq = excluded.pruned_through_seq",
    )
      .bind(Number(next) + 1_000)
      .run();
    await createIssue(company, owner.headers, "Written after the prune");
    const closed = await live.closedWith(5_000);
    expect(closed.code).toBe(4410);
    expect(JSON.stringify(live.frames)).not.toContain("Written after the prune");
  });
});
