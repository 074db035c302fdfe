// Webhook delivery from the SessionDO outbox: fan-out, signing, retries, 410, redelivery and the SSRF
// guard, against the recording fake in fake-receivers.ts. isolation.test.ts covers per-event retries and
// the in-flight cap; the real-receiver tests live in the e2e suite.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { prune, RETENTION_MS } from "../../../../../durable-objects/messaging/webhooks/retention";
import {
  DEFAULT_RETRY_SCHEDULE_MS,
  parseRetryAfter,
  parseSchedule,
  retryDelay,
} from "../../../../../durable-objects/messaging/webhooks/schedule";
import type { DeliveryRecord } from "../../../../../durable-objects/messaging/webhooks/types";
import { legacySignature, standardSignature } from "../../../../../workers/webhooks/signing";
import { relink } from "../../../fake-bridge";
import { asKey, call, createUser, generateKey } from "../../../helpers";
import { PATIENCE_MS } from "../../../patience";
import {
  answers,
  bodyOf,
  connected,
  dueNow,
  type Envelope,
  endpoint,
  incoming,
  insertHook,
  log,
  ok,
  received,
  sessionCall,
  stub,
  to,
  until,
  url,
} from "./fake-receivers";

describe("webhook fan-out and signing", () => {
  it("delivers to subscribed active endpoints only, signed both ways", async () => {
    const all = endpoint("all", ["*"]);
    const some = endpoint("some", ["message.received"]);
    const other = endpoint("other", ["group.update"]);
    const paused = endpoint("paused", ["*"], { isActive: false });
    for (const e of [all, some, other, paused]) answers.set(e.url, ok);
    const s = await connected([all, some, other, paused]);
    await incoming(s, "IN-1");
    await until(s, () => to("all").length === 4 && to("some").length === 1);

    expect(to("all").map((r) => bodyOf(r).event)).toEqual([
      "connection.update",
      "connection.update",
      "message.received",
      "contact.update", // the peer's push name, learnt from the message
    ]);
    expect(to("other")).toEqual([]);
    expect(to("paused")).toEqual([]);
    const [request] = to("some");
    if (!request) throw new Error("no request");
    expect(bodyOf(request)).toMatchObject({
      event: "message.received",
      sessionId: s.slug,
      data: { id: "IN-1" },
    });
    expect(request.headers.get("content-type")).toBe("application/json");
    expect(request.headers.get("user-agent")).toBe("Switchboard-Webhook/1.0");
    const id = request.headers.get("webhook-id") ?? "";
    const timestamp = Number(request.headers.get("webhook-timestamp"));
    expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(60);
    expect(request.headers.get("webhook-signature")).toBe(
      await standardSignature(some.secret, id, timestamp, request.body),
    );
    expect(request.headers.get("x-webhook-signature")).toBe(await legacySignature(some.secret, request.body));
    const [record] = await log(s, "some");
    expect(record).toMatchObject({ status: "delivered", attempts: 1, statusCode: 200, messageId: id });
    expect(JSON.stringify(await log(s, "some"))).not.toContain(some.secret);
  });

  it("loads the endpoints from D1 when none were pushed, global ones included", async () => {
    const user = await createUser("OWNER");
    const key = await generateKey(user);
    const created = await call<Envelope<{ id: string; sessionId: string }>>("POST", "/api/sessions", {
      body: { name: "From D1" },
      headers: asKey(key),
    });
    const { id } = created.body.data;
    await insertHook(endpoint(`own-${id}`, ["*"]), user.userId, id);
    await insertHook(endpoint(`global-${id}`, ["*"]), user.userId, null);
    answers.set(url(`own-${id}`), ok);
    answers.set(url(`global-${id}`), ok);
    // Starting emits connection.update; nothing was pushed, so the object reads D1 to deliver it.
    await call("POST", `/api/sessions/${created.body.data.sessionId}/start`, { headers: asKey(key) });
    await until({ id }, () => to(`own-${id}`).length > 0 && to(`global-${id}`).length > 0);
  });
});

describe("webhook retries", () => {
  it("retries 500, 500 then delivers on the third attempt with the same webhook-id", async () => {
    const hook = endpoint("flaky", ["message.received"]);
    const statuses = [500, 500, 200];
    answers.set(hook.url, () => new Response("x", { status: statuses.shift() ?? 200 }));
    const s = await connected([hook]);
    await incoming(s, "IN-R");
    await until(s, () => to("flaky").length === 1);
    const [first] = await log(s, "flaky");
    expect(first).toMatchObject({ status: "pending", attempts: 1, statusCode: 500, error: "HTTP 500" });
    const wait = Date.parse(first?.nextAttemptAt ?? "") - Date.now();
    expect(wait).toBeGreaterThan(5_000 * 0.9 - 1_000);
    expect(wait).toBeLessThanOrEqual(5_000 * 1.1);
    await dueNow(s);
    await until(s, () => to("flaky").length === 2);
    await dueNow(s);
    await until(s, () => to("flaky").length === 3);
    await until(s, async () => (await log(s, "flaky"))[0]?.status === "delivered");
    expect((await log(s, "flaky"))[0]).toMatchObject({ attempts: 3, statusCode: 200, error: null });
    expect(new Set(to("flaky").map((r) => r.headers.get("webhook-id"))).size).toBe(1);
  });

  it("honours a longer Retry-After", async () => {
    const hook = endpoint("busy", ["message.received"]);
    answers.set(hook.url, () => new Response("", { status: 429, headers: { "Retry-After": "120" } }));
    const s = await connected([hook]);
    await incoming(s, "IN-B");
    await until(s, () => to("busy").length === 1);
    const [record] = await log(s, "busy");
    expect(Date.parse(record?.nextAttemptAt ?? "") - Date.now()).toBeGreaterThan(110_000);
  });

  it("410 Gone disables the endpoint here and in D1, and ends its queue", async () => {
    const s = await connected([]);
    const hook = endpoint(`gone-${s.id}`, ["message.received"]);
    await insertHook(hook, s.userId, s.id);
    await stub(s).setWebhooks(s.id, [hook]);
    // The receiver answers only once both events are queued: otherwise G-2 could arrive after the
    // endpoint was disabled and never be queued for it at all, which is also right but not this test.
    let bothQueued: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      bothQueued = resolve;
    });
    answers.set(hook.url, async () => {
      await gate;
      return new Response("", { status: 410 });
    });
    await incoming(s, "G-1");
    await incoming(s, "G-2");
    // Queued means both have a delivery row (the alarm fans events out); the receiver holds the
    // attempts, so the alarm is left to run by itself rather than awaited here.
    await expect.poll(async () => (await log(s, hook.id)).length, { timeout: PATIENCE_MS }).toBe(2);
    bothQueued();
    await until(s, async () => {
      const records = await log(s, hook.id);
      return records.length === 2 && records.every((d) => d.status === "failed");
    });
    // Both may have been in flight when the first 410 came back; nothing is sent after it.
    expect(to(hook.id).length).toBeLessThanOrEqual(2);
    const errors = (await log(s, hook.id)).map((d) => d.error);
    expect(errors).toEqual(["endpoint disabled: 410 Gone", "endpoint disabled: 410 Gone"]);
    const row = await env.DB.prepare("SELECT is_active, disabled_reason FROM webhooks WHERE id = ?")
      .bind(hook.id)
      .first<{ is_active: number; disabled_reason: string }>();
    expect(row).toEqual({ is_active: 0, disabled_reason: "410 Gone" });
  });

  it("disables an endpoint that has failed everything for 5 days", async () => {
    const hook = endpoint("dead", ["message.received"]);
    answers.set(hook.url, () => new Response("", { status: 500 }));
    const s = await connected([hook]);
    const since = Date.now() - 5 * 86_400_000;
    await runInDurableObject(stub(s), (_i, state) => {
      state.storage.sql.exec("UPDATE webhook_endpoints SET first_failure_at = ?", since);
    });
    await incoming(s, "D-1");
    await until(s, async () => (await log(s, "dead"))[0]?.status === "failed");
    expect((await log(s, "dead"))[0]?.error).toBe("endpoint disabled: failing for 5 days");
  });
});

describe("webhook redelivery and targets", () => {
  it("redelivers with the same webhook-id, as a delivery of its own", async () => {
    const hook = endpoint("again", ["message.received"]);
    answers.set(hook.url, ok);
    const s = await connected([hook]);
    await incoming(s, "A-1");
    await until(s, async () => (await log(s, "again"))[0]?.status === "delivered");
    const [original] = await log(s, "again");
    const missing = await sessionCall(s, "webhook.redeliver", { webhookId: "again", deliveryId: "nope" });
    expect(missing).toMatchObject({ ok: false, status: 404 });
    const again = await sessionCall<DeliveryRecord>(s, "webhook.redeliver", {
      webhookId: "again",
      deliveryId: original?.id,
    });
    expect(again).toMatchObject({ ok: true, data: { status: "pending", messageId: original?.messageId } });
    await until(s, () => to("again").length === 2);
    const ids = to("again").map((r) => r.headers.get("webhook-id"));
    expect(ids).toEqual([original?.messageId, original?.messageId]);
    expect((await log(s, "again")).length).toBe(2);
  });

  it("refuses a private target at delivery time, as a failed attempt", async () => {
    const hook = endpoint("private", ["message.received"], { url: "http://10.0.0.5/hook" });
    const s = await connected([hook]);
    await incoming(s, "P-1");
    await until(s, async () => ((await log(s, "private"))[0]?.attempts ?? 0) >= 1);
    const [record] = await log(s, "private");
    expect(record?.error).toBe("target refused: 10.0.0.5 is a private address");
    expect(record?.statusCode).toBeNull();
    expect(received.length).toBe(0);
  });

  it("never follows a redirect, and records a network error, as failed attempts", async () => {
    const moved = endpoint("moved", ["message.received"]);
    const broken = endpoint("broken", ["message.received"]);
    const redirect = { status: 302, headers: { Location: "http://10.0.0.1/" } };
    answers.set(moved.url, () => new Response(null, redirect));
    answers.set(broken.url, () => {
      throw new TypeError(`connection refused (${broken.secret})`);
    });
    const s = await connected([moved, broken]);
    await incoming(s, "M-1");
    await until(s, async () => ((await log(s, "moved"))[0]?.attempts ?? 0) >= 1);
    await until(s, async () => ((await log(s, "broken"))[0]?.attempts ?? 0) >= 1);
    expect((await log(s, "moved"))[0]).toMatchObject({
      status: "pending",
      statusCode: 302,
      error: "HTTP 302 redirect to http://10.0.0.1/ (redirects are not followed)",
    });
    expect((await log(s, "broken"))[0]?.error).toBe(
      "connection refused by hooks.example.com:443: connection refused ([secret])",
    );
    expect(to("moved").length).toBe(1);
  });

  it("re-arms the alarm when the bridge links again, even if none is pending", async () => {
    const hook = endpoint("later", ["message.received"]);
    answers.set(hook.url, () => new Response("", { status: 500 }));
    const s = await connected([hook]);
    await incoming(s, "L-1");
    await until(s, () => to("later").length === 1);
    // The attempt is recorded (500) and its retry scheduled: only then is "the alarm was lost" the case.
    await until(s, async () => (await log(s, "later"))[0]?.statusCode === 500);
    await runInDurableObject(stub(s), (_instance, state) => state.storage.deleteAlarm());
    const again = await relink(s.bridge, s.id);
    expect("link" in again ? "linked" : again.status).toBe("linked");
    // The relink is a close and a new dial (one live link per bridge), so the alarm may be set by
    // either; it must be set, or the retry would wait for the next event.
    await expect
      .poll(() => runInDurableObject(stub(s), (_instance, state) => state.storage.getAlarm()), {
        timeout: PATIENCE_MS,
      })
      .not.toBeNull();
  });
});

describe("webhook schedule and retention", () => {
  it("follows the schedule with ±10% jitter, then gives up", () => {
    expect(DEFAULT_RETRY_SCHEDULE_MS.length).toBe(8);
    expect(retryDelay(1, DEFAULT_RETRY_SCHEDULE_MS, null, () => 0)).toBe(4_500);
    expect(retryDelay(1, DEFAULT_RETRY_SCHEDULE_MS, null, () => 1)).toBe(5_500);
    expect(retryDelay(4, DEFAULT_RETRY_SCHEDULE_MS, null, () => 0.5)).toBe(2 * 3_600_000);
    expect(retryDelay(8, DEFAULT_RETRY_SCHEDULE_MS, null)).toBeNull();
    expect(retryDelay(1, DEFAULT_RETRY_SCHEDULE_MS, 60_000, () => 0.5)).toBe(60_000);
    expect(retryDelay(1, DEFAULT_RETRY_SCHEDULE_MS, 1_000, () => 0.5)).toBe(5_000);
    expect(parseSchedule("0,200,400")).toEqual([0, 200, 400]);
    expect(parseSchedule("0,soon")).toBe(DEFAULT_RETRY_SCHEDULE_MS);
    expect(parseRetryAfter("30", 0)).toBe(30_000);
    expect(parseRetryAfter(new Date(90_000).toUTCString(), 30_000)).toBe(60_000);
    expect(parseRetryAfter("whenever", 0)).toBeNull();
  });

  it("drops finished deliveries and outbox entries older than a week", async () => {
    const id = `retention-${crypto.randomUUID()}`;
    await runInDurableObject(env.SESSION.getByName(id), (_instance, state) => {
      const sql = state.storage.sql;
      const old = Date.now() - RETENTION_MS - 1;
      for (const seq of [1, 2, 3])
        sql.exec("INSERT INTO outbox (seq, event, data, created_at) VALUES (?, 'x', '{}', ?)", seq, old);
      sql.exec("INSERT INTO webhook_state (k, v) VALUES ('fanned_out_seq', 2)");
      sql.exec(
        `INSERT INTO webhook_deliveries (id, endpoint_id, outbox_seq, message_id, event, status, created_at)
         VALUES ('d1', 'e', 1, 'm', 'message.received', 'delivered', ?),
                ('d2', 'e', 2, 'm', 'message.received', 'pending', ?)`,
        old,
        old,
      );
      expect(prune(sql, Date.now())).toBe(false);
      const left = (table: string, column: string) =>
        sql
          .exec<{ v: string | number }>(`SELECT ${column} AS v FROM ${table} ORDER BY 1`)
          .toArray()
          .map((r) => r.v);
      expect(left("webhook_deliveries", "id")).toEqual(["d2"]); // still owed
      expect(left("outbox", "seq")).toEqual([2, 3]); // 2 is needed by d2, 3 not fanned out yet
    });
  });
});
