// Webhook delivery against a real receiver process that goes down, fails and goes away: nothing is
// lost, each event arrives once (in any order: each is retried on its own schedule), retries keep one
// webhook-id, 410 disables, redelivery repeats it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient } from "../support/api.ts";
import { connectedSession, personJid, world } from "../support/messaging.ts";
import {
  createWebhook,
  deliveriesOf,
  firstArrivals,
  listWebhooks,
  payloadOf,
  type Received,
  type Receiver,
  sleep,
  startWebhookStack,
  uniqueId,
  waitFor,
} from "../support/receiver.ts";
import type { Stack } from "../support/stack.ts";

/** Quick retries that still outlast a receiver down for a few seconds (about 9 s in all). */
const RETRY_SCHEDULE = "0,200,400,800,1000,1000,1000,1000,1000,1000,1000,1000";
const EVENTS_WHILE_DOWN = 20;
const QUIET_MS = 3_000;

let stack: Stack;
let api: ApiClient;
let receiver: Receiver;

beforeAll(async () => {
  [stack, receiver] = await startWebhookStack(RETRY_SCHEDULE);
  api = await adminClient(stack.baseUrl);
});

afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

const textOf = (entry: Received) => {
  const data = payloadOf(entry).data as { content?: unknown };
  return typeof data.content === "string" ? data.content : "";
};
const accepted = (entries: readonly Received[]) =>
  entries.filter((e) => e.answered >= 200 && e.answered < 300);

/** Resolves when `path` has accepted `count` distinct webhook-ids. */
const acceptedAt = (path: string, count: number, timeoutMs: number, filter = (_e: Received) => true) =>
  waitFor(
    async () => {
      const entries = (await receiver.received(path)).filter(filter);
      return firstArrivals(accepted(entries)).length >= count ? entries : undefined;
    },
    timeoutMs,
    `${count} accepted deliveries at ${path}`,
  );

/** Every event delivered once (one 2xx per webhook-id); order is not promised (docs/webhooks.md). */
function expectEachOnce(entries: readonly Received[], texts: readonly string[], where: string): void {
  const ok = accepted(entries);
  const perId = new Map<string, number>();
  for (const entry of ok)
    perId.set(entry.headers["webhook-id"] ?? "", (perId.get(entry.headers["webhook-id"] ?? "") ?? 0) + 1);
  expect(
    [...perId.values()].filter((n) => n > 1),
    `${where}: accepted more than once`,
  ).toEqual([]);
  expect(ok.map(textOf).sort(), `${where}: events accepted`).toEqual([...texts].sort());
}

describe("delivery", () => {
  it("receiver down for a while, then back: every event arrives, once", async () => {
    const sid = uniqueId("wh-down");
    await connectedSession(api, sid);
    const chat = `/${sid}/received-only`;
    const all = `/${sid}/everything`;
    const chatHook = await createWebhook(api, sid, {
      name: "chat",
      url: receiver.url(chat),
      events: ["message.received"],
    });
    await createWebhook(api, sid, { name: "all", url: receiver.url(all), events: ["*"] });
    const peer = personJid();
    const texts = Array.from({ length: EVENTS_WHILE_DOWN }, (_, i) => `while down #${i}`);

    await receiver.kill();
    for (const text of texts)
      await world(api, sid, "receive", { from: peer, content: { type: "text", text } });
    // Down long enough that events have failed attempts on record.
    await waitFor(
      async () => {
        const log = await deliveriesOf(api, sid, chatHook.id);
        return log.data.some((d) => d.attempts >= 2 && d.status !== "delivered") ? true : undefined;
      },
      10_000,
      "a failed attempt in the deliveries log while the receiver is down",
    );
    await sleep(500);
    await receiver.restart();

    const isMessage = (entry: Received) => payloadOf(entry).event === "message.received";
    const atChat = await acceptedAt(chat, texts.length, 30_000);
    expectEachOnce(atChat, texts, chat);
    const atAll = (await acceptedAt(all, texts.length, 30_000, isMessage)).filter(isMessage);
    expectEachOnce(atAll, texts, all);

    const log = await deliveriesOf(api, sid, chatHook.id);
    expect(log.total).toBe(texts.length);
    expect(log.data.every((d) => d.status === "delivered" && d.statusCode === 200)).toBe(true);
    expect(Math.max(...log.data.map((d) => d.attempts))).toBeGreaterThanOrEqual(2);
    expect(new Set(log.data.map((d) => d.messageId))).toEqual(
      new Set(firstArrivals(atChat).map((e) => e.headers["webhook-id"])),
    );
  });

  it("500, 500, then 200: the third attempt delivers, with the same webhook-id; redeliver sends it again", async () => {
    const sid = uniqueId("wh-flaky");
    await connectedSession(api, sid);
    const path = `/${sid}/flaky`;
    await receiver.behave(path, { statuses: [500, 500] });
    const hook = await createWebhook(api, sid, {
      name: "flaky",
      url: receiver.url(path),
      events: ["message.received"],
    });
    await world(api, sid, "receive", {
      from: personJid(),
      content: { type: "text", text: "third time lucky" },
    });

    const entries = await acceptedAt(path, 1, 20_000);
    expect(entries.map((e) => e.answered)).toEqual([500, 500, 200]);
    const ids = new Set(entries.map((e) => e.headers["webhook-id"]));
    expect(ids.size).toBe(1);
    const [webhookId] = [...ids];
    expect(new Set(entries.map((e) => e.body)).size).toBe(1);

    const log = await waitFor(
      async () => {
        const page = await deliveriesOf(api, sid, hook.id);
        return page.data[0]?.status === "delivered" ? page : undefined;
      },
      10_000,
      "the delivery to be logged as delivered",
    );
    expect(log.total).toBe(1);
    expect(log.data[0]).toMatchObject({
      messageId: webhookId,
      event: "message.received",
      status: "delivered",
      attempts: 3,
      statusCode: 200,
    });

    const delivery = log.data[0];
    if (!delivery) return;
    const again = await api.call(
      "POST",
      `/api/webhooks/${sid}/${hook.id}/deliveries/${delivery.id}/redeliver`,
    );
    expect(again.status).toBe(200);
    const after = await waitFor(
      async () => {
        const now = await receiver.received(path);
        return now.length >= 4 ? now : undefined;
      },
      10_000,
      "the redelivery",
    );
    expect(after[3]?.headers["webhook-id"]).toBe(webhookId);
    expect(after[3]?.body).toBe(entries[0]?.body);
    expect(after[3]?.answered).toBe(200);
  });

  it("no answer at all: the log names the cause (DNS, refused, reset, TLS, timeout), never workerd's `internal error`", async () => {
    const sid = uniqueId("wh-unreachable");
    await connectedSession(api, sid);
    const slow = `/${sid}/slow`;
    const rude = `/${sid}/rude`;
    // Longer than the 15 s an attempt waits.
    await receiver.behave(slow, { delayMs: 20_000 });
    await receiver.behave(rude, { hangUp: true });
    const where = `127.0.0.1:${receiver.port}`;
    const cases = {
      dns: {
        url: "http://nonexistent.invalid/hook",
        error:
          "DNS lookup failed: nonexistent.invalid could not be resolved (check the webhook URL's host name)",
      },
      refused: {
        url: "http://127.0.0.1:1/hook",
        error: "connection refused: nothing accepts connections on 127.0.0.1:1 (is the receiver running?)",
      },
      reset: {
        url: receiver.url(rude),
        error: `connection reset: ${where} closed the connection before answering`,
      },
      // The receiver speaks plain HTTP.
      tls: {
        url: `https://${where}/${sid}/tls`,
        error: `TLS handshake failed with ${where}: an untrusted or expired certificate, or the port does not speak HTTPS`,
      },
      timeout: { url: receiver.url(slow), error: `timeout: ${where} sent no answer within 15 s` },
    };
    const hooks = await Promise.all(
      Object.entries(cases).map(async ([name, { url }]) => ({
        name,
        hook: await createWebhook(api, sid, { name, url, events: ["message.received"] }),
      })),
    );
    await world(api, sid, "receive", { from: personJid(), content: { type: "text", text: "anyone?" } });
    for (const { name, hook } of hooks) {
      const first = await waitFor(
        async () => (await deliveriesOf(api, sid, hook.id)).data.find((d) => d.error !== null),
        40_000,
        `the ${name} failure in the deliveries log`,
      );
      expect(first, name).toMatchObject({
        statusCode: null,
        error: cases[name as keyof typeof cases].error,
      });
    }
  });

  it("410 Gone disables the endpoint (isActive false, with the reason); later events are not delivered", async () => {
    const sid = uniqueId("wh-gone");
    await connectedSession(api, sid);
    const gone = `/${sid}/gone`;
    const witness = `/${sid}/witness`;
    await receiver.behave(gone, { status: 410 });
    const hook = await createWebhook(api, sid, {
      name: "gone",
      url: receiver.url(gone),
      events: ["message.received"],
    });
    await createWebhook(api, sid, {
      name: "witness",
      url: receiver.url(witness),
      events: ["message.received"],
    });
    const peer = personJid();
    await world(api, sid, "receive", { from: peer, content: { type: "text", text: "first" } });
    await waitFor(
      async () => ((await receiver.received(gone)).length >= 1 ? true : undefined),
      10_000,
      "the 410",
    );

    const disabled = await waitFor(
      async () => (await listWebhooks(api, sid)).find((w) => w.id === hook.id && !w.isActive),
      10_000,
      "the endpoint to be disabled",
    );
    expect(disabled.disabledReason).toMatch(/410/);

    await world(api, sid, "receive", { from: peer, content: { type: "text", text: "second" } });
    await acceptedAt(witness, 2, 10_000);
    await sleep(QUIET_MS);
    const received = await receiver.received(gone);
    expect(received.map(textOf)).toEqual(["first"]);
    const log = await deliveriesOf(api, sid, hook.id);
    expect(log.data.find((d) => d.statusCode === 410)).toMatchObject({ status: "failed", attempts: 1 });
  });
});
