import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  broadcastGap,
  DEFAULT_GAP,
  parseGap,
  pickGap,
} from "../../../durable-objects/messaging/broadcasts/gap";
import type { Env } from "../../../workers/core/env";
import { answerSend, type ConnectedSession, connectedSession } from "../connected-session";
import type { Link } from "../fake-bridge";
import { asKey, call, createUser, generateKey } from "../helpers";
import { PATIENCE_MS } from "../patience";

type Envelope<T> = { status: boolean; message: string; data: T; error?: string };
type Frame = Record<string, unknown> & { type: string };
type Recipient = { jid: string; status: string; messageId: string; error: string | null; attempts: number };
type Detail = {
  id: string;
  status: string;
  total: number;
  sent: number;
  failed: number;
  recipients: Recipient[];
};

const ME = "628111000111@s.whatsapp.net";
const person = (n: number) => `62812${String(n).padStart(7, "0")}@s.whatsapp.net`;

type Connected = ConnectedSession;
const connected = () => connectedSession("Broadcaster", ME);

const stub = (s: Connected) => env.SESSION.getByName(s.id);

/** The next `send` the session asks its bridge for, after the ones already seen. */
async function nextSend(link: Link, seen: Set<unknown>, timeoutMs = PATIENCE_MS): Promise<Frame> {
  const frame = await link.next(
    (f) =>
      f.type === "command" && f.name === "wa" && !seen.has(f.id) && (f.args as { op?: string }).op === "send",
    timeoutMs,
  );
  seen.add(frame.id);
  return frame;
}

function answer(link: Link, frame: Frame, failure?: { status: number; error: string }): void {
  answerSend(link, frame, ME, failure);
}

const argsOf = (frame: Frame) => frame.args as { to: string; messageId: string };

async function start(s: Connected, recipients: string[], message = "Hello all") {
  return call<Envelope<{ broadcastId: string; total: number }> & { success?: boolean }>(
    "POST",
    `/api/messages/${s.slug}/broadcast`,
    { body: { recipients, message }, headers: asKey(s.key) },
  );
}

async function detail(s: Connected, broadcastId: string): Promise<Detail> {
  const res = await call<Envelope<Detail>>(
    "GET",
    `/api/messages/${s.slug}/broadcast/history/${broadcastId}`,
    {
      headers: asKey(s.key),
    },
  );
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

async function stateOf(s: Connected): Promise<string> {
  const res = await call<Envelope<{ state: string }>>("GET", `/api/sessions/${s.slug}`, {
    headers: asKey(s.key),
  });
  return res.body.data.state;
}

const alarmOf = (s: Connected) => runInDurableObject(stub(s), (_, state) => state.storage.getAlarm());

/** Makes the running broadcast due now and runs the alarm, as if its wait had passed. */
async function stepNow(s: Connected): Promise<boolean> {
  await runInDurableObject(stub(s), (_, state) => {
    state.storage.sql.exec("UPDATE broadcasts SET next_at = 0 WHERE status = 'running'");
  });
  return runDurableObjectAlarm(stub(s));
}

describe("broadcast gap configuration", () => {
  it("parses ranges and single values, rejecting anything else", () => {
    expect(parseGap("20-40")).toEqual({ min: 20, max: 40 });
    expect(parseGap(" 1500 ")).toEqual({ min: 1500, max: 1500 });
    for (const bad of [undefined, "", "40-20", "-5", "a-b", "1-2-3", "1.5-2"])
      expect(parseGap(bad)).toBeNull();
  });

  it("defaults to 10–20 s and refuses to shorten it in production", () => {
    const config = (ENVIRONMENT: string, BROADCAST_GAP_MS?: string) =>
      ({ ENVIRONMENT, BROADCAST_GAP_MS }) as Env;
    expect(broadcastGap(config("production"))).toEqual(DEFAULT_GAP);
    expect(broadcastGap(config("production", "20-40"))).toEqual(DEFAULT_GAP);
    expect(broadcastGap(config("production", "30000-60000"))).toEqual({ min: 30_000, max: 60_000 });
    expect(broadcastGap(config("development", "20-40"))).toEqual({ min: 20, max: 40 });
    expect(broadcastGap(config("test", "nonsense"))).toEqual(DEFAULT_GAP);
  });

  it("picks whole milliseconds within the range, both ends included", () => {
    expect(pickGap(DEFAULT_GAP, () => 0)).toBe(10_000);
    expect(pickGap(DEFAULT_GAP, () => 0.999_999_9)).toBe(20_000);
    for (let i = 0; i < 200; i++) {
      const gap = pickGap(DEFAULT_GAP);
      expect(gap).toBeGreaterThanOrEqual(10_000);
      expect(gap).toBeLessThanOrEqual(20_000);
    }
  });
});

describe("POST /api/messages/{sessionId}/broadcast", () => {
  it("answers at once, sends the first recipient, then waits 10–20 s (production gap)", async () => {
    const s = await connected();
    const recipients = [person(1), person(2), person(1), person(3)];
    const res = await start(s, recipients);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      status: true,
      success: true,
      message: "Broadcast started",
      data: { total: 3 },
    });
    const { broadcastId } = res.body.data;

    const seen = new Set<unknown>();
    const first = await nextSend(s.link, seen);
    expect(argsOf(first).to).toBe(person(1));
    expect(argsOf(first).messageId).toMatch(/^3EB0[0-9A-F]{20}$/);
    const before = Date.now();
    answer(s.link, first);
    await until(async () => ((await detail(s, broadcastId)).sent === 1 ? true : undefined), "the first send");
    const after = Date.now();
    const alarm = await until(async () => {
      const at = await alarmOf(s);
      return at !== null && at >= before + 10_000 ? at : undefined;
    }, "the gap alarm");
    expect(alarm).toBeGreaterThanOrEqual(before + 10_000);
    expect(alarm).toBeLessThanOrEqual(after + 20_000);

    const progress = await detail(s, broadcastId);
    expect(progress).toMatchObject({ status: "running", total: 3, sent: 1, failed: 0 });
    expect(progress.recipients.map((r) => [r.jid, r.status])).toEqual([
      [person(1), "sent"],
      [person(2), "pending"],
      [person(3), "pending"],
    ]);
    expect(new Set(progress.recipients.map((r) => r.messageId)).size).toBe(3);
    expect(progress.recipients[0]?.messageId).toBe(argsOf(first).messageId);

    const list = await call<Envelope<{ id: string; sent: number }[]> & { total: number }>(
      "GET",
      `/api/messages/${s.slug}/broadcast/history?limit=5`,
      { headers: asKey(s.key) },
    );
    expect(list.body).toMatchObject({ status: true, total: 1, limit: 5, offset: 0 });
    expect(list.body.data[0]).toMatchObject({ id: broadcastId, sent: 1 });
  });

  it("retries an unknown outcome (503) with the same message id, and moves on after a refusal", async () => {
    const s = await connected();
    const { broadcastId } = (await start(s, [person(1), person(2), person(3)])).body.data;
    const seen = new Set<unknown>();
    answer(s.link, await nextSend(s.link, seen));
    await until(async () => ((await detail(s, broadcastId)).sent === 1 ? true : undefined), "the first send");

    const stepping = stepNow(s);
    const lost = await nextSend(s.link, seen);
    answer(s.link, lost, { status: 503, error: "The bridge did not answer in time" });
    await stepping;
    let state = await detail(s, broadcastId);
    expect(state.recipients[1]).toMatchObject({ status: "pending", attempts: 1 });
    expect(state.recipients[1]?.error).toContain("did not answer");
    const retryAt = await alarmOf(s);
    expect(retryAt).not.toBeNull();
    expect((retryAt ?? 0) - Date.now()).toBeLessThanOrEqual(5_000);

    const retrying = stepNow(s);
    const retry = await nextSend(s.link, seen);
    expect(argsOf(retry)).toEqual(argsOf(lost));
    answer(s.link, retry);
    await retrying;

    const refusing = stepNow(s);
    answer(s.link, await nextSend(s.link, seen), { status: 404, error: "not on WhatsApp" });
    await refusing;
    state = await detail(s, broadcastId);
    expect(state).toMatchObject({ status: "completed", sent: 2, failed: 1 });
    expect(state.recipients[2]).toMatchObject({ status: "failed", error: "not on WhatsApp", attempts: 1 });
    expect(await alarmOf(s)).toBeNull();
  });

  it("a send cut by the bridge link dropping is retried with the same id once the session is back", async () => {
    const s = await connected();
    const { broadcastId } = (await start(s, [person(1), person(2)])).body.data;
    const seen = new Set<unknown>();
    const cut = await nextSend(s.link, seen);
    s.link.socket.close(4000, "bridge killed");
    await until(
      async () => ((await detail(s, broadcastId)).recipients[0]?.attempts === 1 ? true : undefined),
      "503",
    );

    // While the session is down the job waits: no send, no attempt consumed.
    expect(await stepNow(s)).toBe(true);
    expect((await detail(s, broadcastId)).recipients[0]).toMatchObject({ status: "pending", attempts: 1 });
    const waitAt = await alarmOf(s);
    expect((waitAt ?? 0) - Date.now()).toBeGreaterThan(3_000);

    const back = await s.bridge.hold(s.id);
    if (!("link" in back)) throw new Error("could not hold again");
    const stepping = stepNow(s);
    const again = await nextSend(back.link, seen);
    expect(argsOf(again)).toEqual(argsOf(cut));
    answer(back.link, again);
    await stepping;
    expect((await detail(s, broadcastId)).recipients[0]).toMatchObject({ status: "sent", attempts: 2 });
  });

  it("gives up after a day without the session: the rest fail with the reason", async () => {
    const s = await connected();
    const { broadcastId } = (await start(s, [person(1), person(2)])).body.data;
    const seen = new Set<unknown>();
    answer(s.link, await nextSend(s.link, seen));
    await until(async () => ((await detail(s, broadcastId)).sent === 1 ? true : undefined), "the first send");
    s.link.socket.close(4000, "bridge gone");
    await until(async () => ((await stateOf(s)) === "reconnecting" ? true : undefined), "the link loss");
    await stepNow(s);
    await runInDurableObject(stub(s), (_, state) => {
      state.storage.sql.exec("UPDATE broadcasts SET waiting_since = ?", Date.now() - 25 * 3_600_000);
    });
    await stepNow(s);
    const done = await detail(s, broadcastId);
    expect(done).toMatchObject({ status: "completed", sent: 1, failed: 1 });
    expect(done.recipients[1]?.error).toBe("Session not connected for 24 hours");
    expect(seen.size).toBe(1);
  });

  it("cancel stops the job: the rest are cancelled and never sent", async () => {
    const s = await connected();
    const { broadcastId } = (await start(s, [person(1), person(2), person(3)])).body.data;
    const seen = new Set<unknown>();
    answer(s.link, await nextSend(s.link, seen));
    await until(async () => ((await detail(s, broadcastId)).sent === 1 ? true : undefined), "the first send");

    const cancel = await call<Envelope<{ status: string; sent: number }>>(
      "POST",
      `/api/messages/${s.slug}/broadcast/${broadcastId}/cancel`,
      { headers: asKey(s.key) },
    );
    expect(cancel.status).toBe(200);
    expect(cancel.body.data).toMatchObject({ status: "cancelled", sent: 1 });
    await stepNow(s);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(seen.size).toBe(1);
    expect(s.link.frames.filter((f) => f.type === "command" && f.name === "wa")).toHaveLength(1);
    const after = await detail(s, broadcastId);
    expect(after.recipients.map((r) => r.status)).toEqual(["sent", "cancelled", "cancelled"]);
    expect(await alarmOf(s)).toBeNull();

    const again = await call("POST", `/api/messages/${s.slug}/broadcast/${broadcastId}/cancel`, {
      headers: asKey(s.key),
    });
    expect(again.status).toBe(200);
    const unknown = await call("POST", `/api/messages/${s.slug}/broadcast/nope/cancel`, {
      headers: asKey(s.key),
    });
    expect(unknown.status).toBe(404);
  });

  it("rejects bad bodies with 400 (naming invalid JIDs) and a disconnected session with 503", async () => {
    const s = await connected();
    const bad = await start(s, [person(1), "not-a-jid", "12345", "77000000000001@lid", "x@lid"]);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain("not-a-jid");
    expect(bad.body.error).toContain("12345");
    expect(bad.body.error).toContain("x@lid");
    // A person addressed by LID is a valid recipient (issue 20): only the malformed ones are named.
    expect(bad.body.error).not.toContain("77000000000001@lid");
    const tooMany = Array.from({ length: 1001 }, (_, i) => person(i));
    for (const body of [
      { recipients: [], message: "x" },
      { recipients: tooMany, message: "x" },
      { recipients: [person(1)], message: "" },
      { recipients: [person(1)], message: "x".repeat(4097) },
      { recipients: [person(1)] },
      { recipients: [person(1)], message: "x", extra: true },
    ]) {
      const res = await call("POST", `/api/messages/${s.slug}/broadcast`, { body, headers: asKey(s.key) });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
    }
    const withDelay = await call("POST", `/api/messages/${s.slug}/broadcast`, {
      body: { recipients: [person(1)], message: "x", delay: 5 },
      headers: asKey(s.key),
    });
    expect(withDelay.status).toBe(200);

    const key = await generateKey(await createUser("OWNER"));
    const idle = await call<Envelope<{ sessionId: string }>>("POST", "/api/sessions", {
      body: { name: "Idle" },
      headers: asKey(key),
    });
    const res = await call("POST", `/api/messages/${idle.body.data.sessionId}/broadcast`, {
      body: { recipients: [person(1)], message: "x" },
      headers: asKey(key),
    });
    expect(res.status).toBe(503);
    const other = await call("GET", `/api/messages/${s.slug}/broadcast/history`, { headers: asKey(key) });
    expect(other.status).toBe(404);
  });
});
