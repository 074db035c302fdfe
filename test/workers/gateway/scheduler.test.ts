import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseSendAt } from "../../../durable-objects/messaging/scheduler/time";
import { answerSend, connect, type OwnedSession, ownedSession } from "../connected-session";
import type { Link } from "../fake-bridge";
import { asKey, call } from "../helpers";

type Envelope<T> = { status: boolean; message: string; data: T; error?: string };
type Frame = Record<string, unknown> & { type: string };
type Scheduled = {
  id: string;
  jid: string;
  sendAt: string;
  timezone: string;
  cronExpression: string | null;
  status: string;
  attempts: number;
  lastError: string | null;
  messageId: string | null;
  recurringId: string | null;
};

const ME = "628111000222@s.whatsapp.net";
const PEER = "628120000001@s.whatsapp.net";

type Session = OwnedSession & { link: Link | null };

/** A session; with `connect`, held by a fake bridge and connected. */
async function session(shouldConnect: boolean): Promise<Session> {
  const owned = await ownedSession("Scheduler");
  return shouldConnect ? connect(owned, ME) : { ...owned, link: null };
}

const schedule = (s: Session, body: Record<string, unknown>) =>
  call<Envelope<Scheduled>>("POST", `/api/scheduler/${s.slug}`, { body, headers: asKey(s.key) });

async function get(s: Session, id: string): Promise<Scheduled> {
  const res = await call<Envelope<Scheduled>>("GET", `/api/scheduler/${s.slug}/${id}`, {
    headers: asKey(s.key),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

async function until<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function nextSend(link: Link, seen: Set<unknown>): Promise<Frame> {
  const frame = await link.next(
    (f) =>
      f.type === "command" && f.name === "wa" && !seen.has(f.id) && (f.args as { op?: string }).op === "send",
  );
  seen.add(frame.id);
  return frame;
}

function answer(link: Link, frame: Frame, failure?: { status: number; error: string }): void {
  answerSend(link, frame, ME, failure);
}

/** Makes every pending row due now and runs the alarm, as if the wait had passed. */
async function fireNow(s: Session): Promise<boolean> {
  const stub = env.SESSION.getByName(s.id);
  await runInDurableObject(stub, (_, state) => {
    state.storage.sql.exec("UPDATE scheduled SET next_at = 0 WHERE status = 'PENDING'");
  });
  return runDurableObjectAlarm(stub);
}

const soon = () => new Date(Date.now() + 200).toISOString();

describe("sendAt and timezones", () => {
  it("reads a local date-time in the given zone and an offset as written", () => {
    expect(parseSendAt("2030-01-15T09:00", "Europe/Berlin")).toBe(Date.parse("2030-01-15T08:00:00Z"));
    expect(parseSendAt("2030-07-15T09:00:00", "Europe/Berlin")).toBe(Date.parse("2030-07-15T07:00:00Z"));
    expect(parseSendAt("2030-07-15T09:00:00+07:00", "Europe/Berlin")).toBe(
      Date.parse("2030-07-15T02:00:00Z"),
    );
    expect(parseSendAt("2030-02-30T09:00", "UTC")).toBeNull();
    expect(parseSendAt("tomorrow", "UTC")).toBeNull();
  });
});

describe("/api/scheduler/{sessionId}", () => {
  it("creates, lists, updates and deletes; a local sendAt is stored as its UTC instant", async () => {
    const s = await session(false);
    const created = await schedule(s, {
      jid: PEER,
      content: "Good morning",
      sendAt: "2030-01-15T09:00",
      timezone: "Europe/Berlin",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.data).toMatchObject({
      sessionId: s.slug,
      jid: PEER,
      sendAt: "2030-01-15T08:00:00.000Z",
      timezone: "Europe/Berlin",
      status: "PENDING",
      attempts: 0,
    });
    const id = created.body.data.id;
    const utc = await schedule(s, { jid: PEER, content: "UTC by default", sendAt: "2030-01-14T09:00" });
    expect(utc.body.data).toMatchObject({ sendAt: "2030-01-14T09:00:00.000Z", timezone: "UTC" });

    const pending = await call<Envelope<Scheduled[]>>("GET", `/api/scheduler/${s.slug}`, {
      headers: asKey(s.key),
    });
    expect(pending.body.data.map((m) => m.id)).toEqual([utc.body.data.id, id]);

    const moved = await call<Envelope<Scheduled>>("PUT", `/api/scheduler/${s.slug}/${id}`, {
      body: { sendAt: "2030-01-15T10:30", timezone: "Asia/Jakarta", mediaUrl: "https://example.com/a.png" },
      headers: asKey(s.key),
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.data).toMatchObject({ sendAt: "2030-01-15T03:30:00.000Z", mediaType: "image" });
    const text = await call<Envelope<Scheduled>>("PUT", `/api/scheduler/${s.slug}/${id}`, {
      body: { mediaUrl: null },
      headers: asKey(s.key),
    });
    expect(text.body.data).toMatchObject({ mediaUrl: null, mediaType: null, content: "Good morning" });

    expect((await call("DELETE", `/api/scheduler/${s.slug}/${id}`, { headers: asKey(s.key) })).status).toBe(
      200,
    );
    expect((await call("GET", `/api/scheduler/${s.slug}/${id}`, { headers: asKey(s.key) })).status).toBe(404);
    expect((await call("DELETE", `/api/scheduler/${s.slug}/${id}`, { headers: asKey(s.key) })).status).toBe(
      404,
    );
  });

  it("rejects bad schedules with 400", async () => {
    const s = await session(false);
    const base = { jid: PEER, content: "x", sendAt: "2030-01-15T09:00" };
    for (const body of [
      { ...base, timezone: "Mars/Olympus" },
      { ...base, sendAt: "next tuesday" },
      { ...base, sendAt: "2030-02-30T09:00" },
      { ...base, sendAt: "2001-01-01T00:00:00Z" },
      { ...base, cronExpression: "0 9 * *" },
      { ...base, cronExpression: "0 0 9 * * *" },
      { ...base, cronExpression: "61 * * * *" },
      { jid: PEER, sendAt: base.sendAt },
      { ...base, mediaType: "video" },
      { ...base, mediaUrl: "https://example.com/a.mp3", mediaType: "audio" },
      { ...base, fileName: "a.pdf" },
      { ...base, mediaUrl: "ftp://example.com/a.png" },
      { ...base, jid: "not-a-jid" },
      { ...base, extra: 1 },
    ]) {
      const res = await schedule(s, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });

  it("sends a due message with a fixed id and marks it SENT; PUT afterwards is 409", async () => {
    const s = await session(true);
    const { id } = (
      await schedule(s, {
        jid: PEER,
        content: "The report",
        mediaUrl: "https://example.com/files/report.pdf",
        mediaType: "document",
        sendAt: soon(),
      })
    ).body.data;
    const seen = new Set<unknown>();
    const send = await nextSend(s.link as Link, seen);
    const args = send.args as { messageId: string; content: Record<string, unknown> };
    expect(args.messageId).toMatch(/^3EB0[0-9A-F]{20}$/);
    expect(args.content).toEqual({
      type: "document",
      media: { url: "https://example.com/files/report.pdf" },
      fileName: "report.pdf",
      mimetype: "application/pdf",
      caption: "The report",
    });
    answer(s.link as Link, send);
    const sent = await until(async () => {
      const row = await get(s, id);
      return row.status === "SENT" ? row : undefined;
    }, "SENT");
    expect(sent).toMatchObject({ attempts: 1, lastError: null, messageId: args.messageId });
    const history = await call<Envelope<Scheduled[]>>("GET", `/api/scheduler/${s.slug}?tab=history`, {
      headers: asKey(s.key),
    });
    expect(history.body.data.map((m) => m.id)).toEqual([id]);
    const put = await call("PUT", `/api/scheduler/${s.slug}/${id}`, {
      body: { content: "y" },
      headers: asKey(s.key),
    });
    expect(put.status).toBe(409);
  });

  it("retries an unknown outcome with the same id and fails a refused send with its reason", async () => {
    const s = await session(true);
    const link = s.link as Link;
    const seen = new Set<unknown>();
    const { id } = (await schedule(s, { jid: PEER, content: "retry me", sendAt: soon() })).body.data;
    const lost = await nextSend(link, seen);
    answer(link, lost, { status: 503, error: "The bridge link dropped" });
    await until(async () => ((await get(s, id)).attempts === 1 ? true : undefined), "one attempt");
    expect(await get(s, id)).toMatchObject({ status: "PENDING", lastError: "The bridge link dropped" });
    const firing = fireNow(s);
    const retry = await nextSend(link, seen);
    expect((retry.args as { messageId: string }).messageId).toBe(
      (lost.args as { messageId: string }).messageId,
    );
    answer(link, retry);
    await firing;
    expect(await get(s, id)).toMatchObject({ status: "SENT", attempts: 2 });

    const refused = (await schedule(s, { jid: PEER, content: "nope", sendAt: soon() })).body.data.id;
    answer(link, await nextSend(link, seen), {
      status: 403,
      error: "only admins can send messages to this group",
    });
    const failed = await until(async () => {
      const row = await get(s, refused);
      return row.status === "FAILED" ? row : undefined;
    }, "FAILED");
    expect(failed.lastError).toBe("only admins can send messages to this group");
  });

  it("a message for a session that stays down FAILS with a reason after the retry limit (10)", async () => {
    const s = await session(false);
    const { id } = (await schedule(s, { jid: PEER, content: "nobody home", sendAt: soon() })).body.data;
    await until(async () => ((await get(s, id)).attempts === 1 ? true : undefined), "the first attempt");
    const first = await get(s, id);
    expect(first.status).toBe("PENDING");
    expect(first.lastError).toContain("Session not ready");
    const alarm = await runInDurableObject(env.SESSION.getByName(s.id), (_, state) =>
      state.storage.getAlarm(),
    );
    expect((alarm ?? 0) - Date.now()).toBeGreaterThan(50_000);
    for (let attempt = 2; attempt <= 10; attempt++) await fireNow(s);
    const failed = await get(s, id);
    expect(failed).toMatchObject({ status: "FAILED", attempts: 10 });
    expect(failed.lastError).toContain("session not connected after 10 attempts");
    expect(await fireNow(s)).toBe(false);
  });

  it("a cron message moves to the next tick in its timezone and records each run", async () => {
    const s = await session(true);
    const link = s.link as Link;
    const created = await schedule(s, {
      jid: PEER,
      content: "Daily digest",
      sendAt: soon(),
      timezone: "Europe/Berlin",
      cronExpression: "0 9 * * *",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { id } = created.body.data;
    const seen = new Set<unknown>();
    answer(link, await nextSend(link, seen));
    const moved = await until(async () => {
      const row = await get(s, id);
      return row.sendAt !== created.body.data.sendAt ? row : undefined;
    }, "the next tick");
    expect(moved).toMatchObject({ status: "PENDING", attempts: 0, cronExpression: "0 9 * * *" });
    const next = Date.parse(moved.sendAt);
    expect(next).toBeGreaterThan(Date.now());
    expect(next - Date.now()).toBeLessThanOrEqual(25 * 3_600_000);
    const berlin = new Intl.DateTimeFormat("en-GB", {
      timeZone: "Europe/Berlin",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    }).format(new Date(next));
    expect(berlin).toBe("09:00");

    const history = await call<Envelope<Scheduled[]>>("GET", `/api/scheduler/${s.slug}?tab=history`, {
      headers: asKey(s.key),
    });
    expect(history.body.data).toHaveLength(1);
    expect(history.body.data[0]).toMatchObject({ status: "SENT", recurringId: id, cronExpression: null });
  });
});
