// A session's events from a cursor (issue 33): GET /api/sessions/{id}/events reads the webhook outbox
// in order, so a consumer reading from cursor 0 gets every event exactly once, with the ids and
// payloads the webhooks carried; a cursor older than retention is a 410 naming the oldest readable one.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { prune, RETENTION_MS } from "../../../../../durable-objects/messaging/webhooks/retention";
import { Link } from "../../../fake-bridge";
import { asKey, BASE, call, createUser, fetchWorker, generateKey } from "../../../helpers";
import {
  answers,
  bodyOf,
  type Connected,
  connected,
  endpoint,
  incoming,
  ok,
  stub,
  to,
  until,
} from "./fake-receivers";

interface LoggedEvent {
  id: string;
  cursor: string;
  event: string;
  sessionId: string;
  timestamp: string;
  data: { id?: string };
}
type Page = {
  status: boolean;
  data: { events: LoggedEvent[]; next: string };
  details?: { oldestCursor?: string };
};

const read = (s: Connected, query: string, key = s.key) =>
  call<Page>("GET", `/api/sessions/${s.slug}/events${query}`, { headers: asKey(key) });

/** Every event from cursor `after`, page by page (`limit` each), following `next`. */
async function readAll(s: Connected, limit: number, after = "0") {
  const events: LoggedEvent[] = [];
  let cursor = after;
  for (let pages = 0; pages < 50; pages += 1) {
    const page = await read(s, `?after=${cursor}&limit=${limit}`);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    events.push(...page.body.data.events);
    if (page.body.data.events.length === 0) {
      expect(page.body.data.next).toBe(cursor);
      return events;
    }
    cursor = page.body.data.next;
  }
  throw new Error("the log did not end");
}

describe("GET /api/sessions/{id}/events", () => {
  it("from cursor 0 gives every event once, in order, with the webhooks' ids and payloads", async () => {
    const all = endpoint("log-all", ["*"]);
    answers.set(all.url, ok);
    const s = await connected([all]);
    for (const id of ["LOG-1", "LOG-2", "LOG-3"]) await incoming(s, id);
    await until(s, () => to("log-all").length >= 6);

    const events = await readAll(s, 2);
    // Everything in the log reaches the webhook (a delivery may still be on its way as the log is read).
    await until(s, () => to("log-all").length >= events.length);
    const delivered = to("log-all").map((request) => ({
      id: request.headers.get("webhook-id"),
      event: bodyOf(request).event,
      data: bodyOf(request).data,
    }));
    // Deliveries run several at a time, so they may arrive out of order: compared by id.
    const byId = <T extends { id: string | null }>(list: T[]) =>
      [...list].sort((a, b) => String(a.id).localeCompare(String(b.id)));
    expect(byId(events.map((event) => ({ id: event.id, event: event.event, data: event.data })))).toEqual(
      byId(delivered),
    );
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
    const cursors = events.map((event) => Number(event.cursor));
    expect([...cursors].sort((a, b) => a - b)).toEqual(cursors);
    expect(
      events.filter((event) => event.event === "message.received").map((event) => event.data.id),
    ).toEqual(["LOG-1", "LOG-2", "LOG-3"]);
    expect(events.every((event) => event.sessionId === s.slug)).toBe(true);

    // An event emitted after the reader caught up is the next page from its last cursor.
    const last = events.at(-1)?.cursor ?? "0";
    await incoming(s, "LOG-4");
    const later = await readAll(s, 10, last);
    expect(later.filter((event) => event.event === "message.received").map((event) => event.data.id)).toEqual(
      ["LOG-4"],
    );
  });

  it("refuses a malformed cursor or limit (400) and another tenant's session (404)", async () => {
    const s = await connected([]);
    expect((await read(s, "?after=abc")).status).toBe(400);
    expect((await read(s, "?after=-1")).status).toBe(400);
    expect((await read(s, "?limit=0")).status).toBe(400);
    expect((await read(s, "?limit=1001")).status).toBe(400);
    const stranger = await generateKey(await createUser("OWNER"));
    expect((await read(s, "?after=0", stranger)).status).toBe(404);
  });

  it("answers 410 with the oldest readable cursor once retention removed what the cursor follows", async () => {
    const all = endpoint("log-retained", ["*"]);
    answers.set(all.url, ok);
    const s = await connected([all]);
    for (const id of ["OLD-1", "OLD-2"]) await incoming(s, id);
    await until(s, () => to("log-retained").length >= 4);
    const before = await readAll(s, 100);
    expect(before.length).toBeGreaterThanOrEqual(4);

    // A week and a day later, retention prunes what every endpoint already has.
    await runInDurableObject(stub(s), (_instance, state) => {
      state.storage.sql.exec("UPDATE outbox SET created_at = ?", Date.now() - RETENTION_MS - 86_400_000);
      state.storage.sql.exec("UPDATE webhook_deliveries SET created_at = ?", Date.now() - RETENTION_MS - 1);
      prune(state.storage.sql, Date.now());
    });
    await incoming(s, "NEW-1");

    const gone = await read(s, "?after=0");
    expect(gone.status).toBe(410);
    const oldest = gone.headers.get("X-Oldest-Cursor") ?? "";
    expect(JSON.stringify(gone.body)).toContain(`after=${oldest}`);
    expect(Number(oldest)).toBeGreaterThan(0);
    const after = await readAll(s, 100, oldest);
    expect(after.map((event) => event.data.id)).toContain("NEW-1");
    expect(after.map((event) => event.data.id)).not.toContain("OLD-1");
  });
});

async function openStream(s: Connected, after: string, key = s.key): Promise<Response> {
  return fetchWorker(`${BASE}/api/sessions/${s.slug}/events/stream?after=${after}`, {
    headers: { Upgrade: "websocket", ...asKey(key) },
  });
}

const idOf = (frame: Record<string, unknown>) => (frame.data as { id?: string } | undefined)?.id;

describe("GET /api/sessions/{id}/events/stream", () => {
  it("replays the log from the cursor, then follows it: each event once, in order, as the log has it", async () => {
    const s = await connected([]);
    await incoming(s, "ST-1");
    const res = await openStream(s, "0");
    expect(res.status).toBe(101);
    const stream = new Link(res.webSocket as WebSocket);
    await stream.next((frame) => idOf(frame) === "ST-1");
    await incoming(s, "ST-2");
    await stream.next((frame) => idOf(frame) === "ST-2");

    const log = await readAll(s, 100);
    await until(s, () => stream.frames.length >= log.length);
    expect(stream.frames.map((frame) => frame.id)).toEqual(log.map((event) => event.id));
    expect(stream.frames[0]).toMatchObject({ cursor: log[0]?.cursor, sessionId: s.slug });

    // A consumer that comes back with the last cursor it saw gets only what followed.
    const last = String(stream.frames.at(-1)?.cursor);
    stream.socket.close(1000, "done");
    const again = new Link((await openStream(s, last)).webSocket as WebSocket);
    await incoming(s, "ST-3");
    await again.next((frame) => idOf(frame) === "ST-3");
    const after = (await readAll(s, 100, last)).map((event) => event.id);
    await until(s, () => again.frames.length >= after.length);
    expect(again.frames.map((frame) => frame.id)).toEqual(after);
    again.socket.close(1000, "done");
  });

  it("refuses a plain GET (426), a bad cursor (400), another tenant (404) and a cursor past retention (410)", async () => {
    const all = endpoint("stream-retained", ["*"]);
    answers.set(all.url, ok);
    const s = await connected([all]);
    const plain = await call("GET", `/api/sessions/${s.slug}/events/stream`, { headers: asKey(s.key) });
    expect(plain.status).toBe(426);
    expect((await openStream(s, "x1")).status).toBe(400);
    const stranger = await generateKey(await createUser("OWNER"));
    expect((await openStream(s, "0", stranger)).status).toBe(404);
    await incoming(s, "GONE-1");
    await until(s, () => to("stream-retained").length >= 3);
    await runInDurableObject(stub(s), (_instance, state) => {
      state.storage.sql.exec("UPDATE outbox SET created_at = ?", Date.now() - RETENTION_MS - 86_400_000);
      state.storage.sql.exec("UPDATE webhook_deliveries SET created_at = ?", Date.now() - RETENTION_MS - 1);
      prune(state.storage.sql, Date.now());
    });
    const gone = await openStream(s, "0");
    expect(gone.status).toBe(410);
    expect(Number(gone.headers.get("X-Oldest-Cursor"))).toBeGreaterThan(0);
  });

  it("closes when the key that opened it is revoked (4401)", async () => {
    const s = await connected([]);
    const created = await call<{ data: { id: string; key: string } }>("POST", "/api/user/keys", {
      headers: asKey(s.key),
      body: { name: "stream reader", scopes: ["read"], sessionId: s.slug },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const stream = new Link((await openStream(s, "0", created.body.data.key)).webSocket as WebSocket);
    await stream.next((frame) => typeof frame.cursor === "string");
    const revoked = await call("DELETE", `/api/user/keys/${created.body.data.id}`, { headers: asKey(s.key) });
    expect(revoked.status).toBe(200);
    const closed = await stream.closedWith(2_000);
    expect(closed.code).toBe(4401);
  });

  it("closes when the session is deleted", async () => {
    const s = await connected([]);
    const stream = new Link((await openStream(s, "0")).webSocket as WebSocket);
    await stream.next((frame) => typeof frame.cursor === "string");
    const deleted = await call("DELETE", `/api/sessions/${s.slug}/settings`, { headers: asKey(s.key) });
    expect(deleted.status).toBe(200);
    const closed = await stream.closedWith(2_000);
    expect(closed.code).toBe(1000);
  });
});
