// Webhooks end to end: the eleven events, produced by driving the simulated WhatsApp and the API,
// reach a real receiver process on loopback, signed in both header styles; the documented snippet
// verifies them and rejects a tampered body; secrets never come back; POST …/test reports the truth.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually } from "../support/api.ts";
import { type Envelope, jidPath, personJid, world } from "../support/messaging.ts";
import {
  createWebhook,
  deliveriesOf,
  documentedChecks,
  legacySignatureValid,
  listWebhooks,
  payloadOf,
  type Received,
  type Receiver,
  sleep,
  standardSignatureValid,
  startWebhookStack,
  uniqueId,
  type Webhook,
} from "../support/receiver.ts";
import type { Stack } from "../support/stack.ts";

const EVENTS = [
  "message.received",
  "message.sent",
  "message.status",
  "connection.update",
  "group.update",
  "group.upsert",
  "group.participant",
  "contact.update",
  "status.update",
  "message.edited",
  "message.deleted",
] as const;
type EventName = (typeof EVENTS)[number];
/** Long enough for the unsubscribed and inactive endpoints to have received something if they were going to. */
const QUIET_MS = 3_000;

let stack: Stack;
let api: ApiClient;
let receiver: Receiver;

beforeAll(async () => {
  [stack, receiver] = await startWebhookStack("0,300,600,900");
  api = await adminClient(stack.baseUrl);
});

afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

async function createSession(id: string): Promise<void> {
  expect((await api.call("POST", "/api/sessions", { name: id, sessionId: id })).status).toBe(200);
}

/** start → QR → simulated scan → connected, for a session created earlier (webhooks already set). */
async function startAndScan(id: string): Promise<void> {
  expect((await api.call("POST", `/api/sessions/${id}/start`)).status).toBe(200);
  await eventually(async () =>
    (await api.call("GET", `/api/sessions/${id}/qr`)).status === 200 ? true : undefined,
  );
  expect((await api.call("POST", `/api/sessions/${id}/simulate/scan`)).status).toBe(200);
  await eventually(async () => {
    const detail = await api.call<Envelope<{ state: string }>>("GET", `/api/sessions/${id}`);
    return detail.body.data.state === "connected" ? true : undefined;
  });
}

/** What the eleven-events test leaves for the tests after it. */
interface Fixture {
  sid: string;
  otherSid: string;
  hooks: Array<Webhook & { secret: string }>;
  star: Webhook & { secret: string };
  starPath: string;
}
let fixture: Fixture | undefined;
const needFixture = (): Fixture => {
  if (!fixture) throw new Error("the eleven-events test did not get far enough to set up this one");
  return fixture;
};

/** Waits until `probe` finds nothing missing; on timeout, says what still is. */
async function until(probe: () => Promise<string[]>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let missing: string[] = [];
  while (Date.now() < deadline) {
    missing = await probe();
    if (missing.length === 0) return;
    await sleep(200);
  }
  throw new Error(`still missing after ${timeoutMs} ms: ${missing.join("; ")}`);
}

describe("the eleven events", () => {
  it("each reaches an endpoint subscribed to it, signed in both styles; * gets all; unsubscribed, other-session and inactive endpoints get none", async () => {
    const sid = uniqueId("wh-events");
    const otherSid = uniqueId("wh-quiet");
    await createSession(sid);
    await createSession(otherSid);
    const at = (name: string) => `/${sid}/${name}`;

    const single = new Map<EventName, Webhook & { secret: string }>();
    for (const event of EVENTS) {
      single.set(
        event,
        await createWebhook(api, sid, { name: event, url: receiver.url(at(event)), events: [event] }),
      );
    }
    const star = await createWebhook(api, sid, {
      name: "everything",
      url: receiver.url(at("star")),
      events: ["*"],
      secret: "a-plain-secret-chosen-by-the-customer-0123456789",
    });
    const global = await createWebhook(api, sid, {
      name: "every session of mine",
      url: receiver.url(at("global")),
      events: ["*"],
      global: true,
    });
    const inactive = await createWebhook(api, sid, {
      name: "switched off",
      url: receiver.url(at("inactive")),
      events: ["*"],
    });
    const paused = await api.call("PUT", `/api/webhooks/${sid}/${inactive.id}`, { isActive: false });
    expect(paused.status).toBe(200);
    const elsewhere = await createWebhook(api, otherSid, {
      name: "another session",
      url: receiver.url(at("elsewhere")),
      events: ["*"],
    });
    const allHooks = [...single.values(), star, global, inactive, elsewhere];
    fixture = { sid, otherSid, hooks: allHooks, star, starPath: at("star") };

    // connection.update: the session moves through qr and connecting to connected.
    await startAndScan(sid);
    const peer = personJid();
    const received = await world<{ id: string }>(api, sid, "receive", {
      from: peer,
      content: { type: "text", text: "hello from a peer" },
    });
    await world(api, sid, "contact", { jid: peer, name: "Webhook Peer" });
    const sent = await api.call<Envelope<{ id: string }>>(
      "POST",
      `/api/messages/${sid}/${jidPath(peer)}/send`,
      {
        message: { text: "hello back" },
      },
    );
    expect(sent.status).toBe(200);
    const sentId = sent.body.data.id;
    await world(api, sid, "ack", { id: sentId, chat: peer, status: "READ" });
    await world(api, sid, "edit", { id: received.id, chat: peer, text: "hello, edited" });
    await world(api, sid, "revoke", { id: received.id, chat: peer });
    const created = await api.call<Envelope<{ group: { jid: string } }>>(
      "POST",
      `/api/groups/${sid}/create`,
      {
        subject: "Hooks",
        participants: [personJid()],
      },
    );
    expect(created.status).toBe(200);
    const groupJid = created.body.data.group.jid;
    await world(api, sid, "group.peer-update", { jid: groupJid, subject: "Hooks renamed" });
    const member = personJid();
    const added = await api.call("PUT", `/api/groups/${sid}/${jidPath(groupJid)}/members`, {
      action: "add",
      participants: [member],
    });
    expect(added.status).toBe(200);
    const status = await api.call("POST", `/api/status/${sid}/update`, {
      content: "Status for hooks",
      mentions: [member],
    });
    expect(status.status).toBe(200);

    // Each event, and something in its data that proves it is about what this test did.
    const markers: Record<EventName, string[]> = {
      "message.received": [received.id, "hello from a peer"],
      "message.sent": [sentId, "hello back"],
      "message.status": [sentId, "READ"],
      "connection.update": ['"connected"'],
      "group.update": [groupJid, "Hooks renamed"],
      "group.upsert": [groupJid, "Hooks"],
      "group.participant": [groupJid, member],
      "contact.update": [peer, "Webhook Peer"],
      "status.update": ["status@broadcast", "Status for hooks"],
      "message.edited": [received.id, "hello, edited"],
      "message.deleted": [received.id],
    };
    const proves = (entry: Received, event: EventName) => {
      const payload = payloadOf(entry);
      const data = JSON.stringify(payload.data);
      return payload.event === event && markers[event].every((marker) => data.includes(marker));
    };
    const missingAt = async (path: string, events: readonly EventName[]) => {
      const entries = await receiver.received(path);
      return events
        .filter((event) => !entries.some((entry) => proves(entry, event)))
        .map((e) => `${path} ${e}`);
    };
    await until(async () => {
      const missing = [...(await missingAt(at("star"), EVENTS)), ...(await missingAt(at("global"), EVENTS))];
      for (const event of EVENTS) missing.push(...(await missingAt(at(event), [event])));
      return missing;
    }, 30_000);

    await sleep(QUIET_MS);
    expect(await receiver.received(at("inactive"))).toEqual([]);
    expect(await receiver.received(at("elsewhere"))).toEqual([]);

    // Every delivery: a POST with the envelope, about this session, validly signed both ways.
    const secretOf = new Map(allHooks.map((hook) => [new URL(hook.url).pathname, hook]));
    const everything = (await receiver.received()).filter((entry) => entry.path.startsWith(`/${sid}/`));
    for (const entry of everything) {
      const hook = secretOf.get(entry.path);
      expect(hook, entry.path).toBeDefined();
      if (!hook) continue;
      const payload = payloadOf(entry);
      const what = `${entry.path} ${payload.event}`;
      expect(entry.method, what).toBe("POST");
      expect(entry.headers["content-type"], what).toMatch(/^application\/json/);
      expect(Object.keys(payload).sort(), what).toEqual(["data", "event", "sessionId", "timestamp"]);
      expect(payload.sessionId, what).toBe(sid);
      expect(Number.isNaN(Date.parse(payload.timestamp)), what).toBe(false);
      if (!hook.events.includes("*")) expect(hook.events, what).toContain(payload.event);
      expect(entry.headers["webhook-id"], what).toMatch(/\S/);
      expect(entry.headers["webhook-timestamp"], what).toMatch(/^\d{10}$/);
      expect(documentedChecks(hook.secret, entry), `${what}: documented snippet`).toEqual({
        standard: true,
        legacy: true,
      });
      expect(standardSignatureValid(hook.secret, entry), `${what}: webhook-signature`).toBe(true);
      expect(legacySignatureValid(hook.secret, entry), `${what}: X-Webhook-Signature`).toBe(true);
    }
    // Endpoints subscribed to other events saw none of these: each per-event endpoint only its own.
    for (const event of EVENTS) {
      const events = (await receiver.received(at(event))).map((entry) => payloadOf(entry).event);
      expect(new Set(events)).toEqual(new Set([event]));
    }
    await api.call("DELETE", `/api/webhooks/${sid}/${global.id}`);
  });

  it("a tampered body, id or timestamp, or the wrong secret, fails the documented verification", async () => {
    const { hooks } = needFixture();
    // A generated whsec_ secret and one the customer chose: both key styles of the snippet.
    const checked = hooks.filter((hook) => hook.name === "message.received" || hook.name === "everything");
    expect(checked.map((hook) => hook.secret.startsWith("whsec_")).sort()).toEqual([false, true]);
    for (const hook of checked) {
      const path = new URL(hook.url).pathname;
      const entry = (await receiver.received(path)).find((e) => payloadOf(e).event === "message.received");
      expect(entry, path).toBeDefined();
      if (!entry) continue;
      expect(documentedChecks(hook.secret, entry)).toEqual({ standard: true, legacy: true });
      const tampered = { ...entry, body: entry.body.replace("hello from a peer", "hello from a thief") };
      expect(tampered.body).not.toBe(entry.body);
      expect(documentedChecks(hook.secret, tampered)).toEqual({ standard: false, legacy: false });
      expect(legacySignatureValid(hook.secret, tampered)).toBe(false);
      expect(standardSignatureValid(hook.secret, tampered)).toBe(false);
      const otherId = { ...entry.headers, "webhook-id": `${entry.headers["webhook-id"]}x` };
      expect(documentedChecks(hook.secret, { ...entry, headers: otherId }).standard).toBe(false);
      const later = String(Number(entry.headers["webhook-timestamp"]) + 1);
      const moved = { ...entry.headers, "webhook-timestamp": later };
      expect(documentedChecks(hook.secret, { ...entry, headers: moved }).standard).toBe(false);
      // One character changed inside the key (appending would land after base64 padding, ignored).
      const wrong = `${hook.secret.slice(0, 10)}${hook.secret[10] === "A" ? "B" : "A"}${hook.secret.slice(11)}`;
      expect(documentedChecks(wrong, entry)).toEqual({ standard: false, legacy: false });
    }
  });

  it("secrets never appear in any GET: lists and delivery logs", async () => {
    const { sid, otherSid, hooks } = needFixture();
    const secrets = hooks.flatMap((hook) => [hook.secret, hook.secret.replace(/^whsec_/, "")]);
    expect(hooks.filter((hook) => hook.secret.startsWith("whsec_")).length).toBeGreaterThan(0);
    const bodies: unknown[] = [];
    for (const session of [sid, otherSid]) {
      const listed = await api.call<Envelope<Webhook[]>>("GET", `/api/webhooks/${session}`);
      expect(listed.status).toBe(200);
      bodies.push(listed.body);
      for (const hook of listed.body.data) {
        expect(Object.keys(hook)).not.toContain("secret");
        const log = await api.call(
          "GET",
          `/api/webhooks/${session}/${hook.id}/deliveries?limit=100&offset=0`,
        );
        expect(log.status).toBe(200);
        bodies.push(log.body);
      }
    }
    const text = JSON.stringify(bodies);
    for (const secret of secrets) expect(text.includes(secret), "a secret in a GET").toBe(false);
    expect(text).not.toMatch(/"secret"\s*:/);
  });

  it("the deliveries log shows each delivery: event, attempts, status code, latency", async () => {
    const { sid, star } = needFixture();
    const log = await deliveriesOf(api, sid, star.id);
    expect(log.total).toBeGreaterThanOrEqual(EVENTS.length);
    expect(new Set(log.data.map((delivery) => delivery.event))).toEqual(new Set(EVENTS));
    for (const delivery of log.data) {
      expect(delivery).toMatchObject({ webhookId: star.id, status: "delivered", statusCode: 200 });
      expect(delivery.attempts).toBeGreaterThanOrEqual(1);
      expect(typeof delivery.latencyMs).toBe("number");
      expect(delivery.deliveredAt).not.toBeNull();
    }
    const ids = new Set(
      (await receiver.received(needFixture().starPath)).map((e) => e.headers["webhook-id"]),
    );
    for (const delivery of log.data) expect(ids).toContain(delivery.messageId);
  });
});

describe("POST /webhooks/{sessionId}/{webhookId}/test", () => {
  it("ok true against the live receiver, which gets a signed webhook.test; ok false with a reason when it is down", async () => {
    const sid = uniqueId("wh-test");
    await createSession(sid);
    const path = `/${sid}/test-target`;
    const hook = await createWebhook(api, sid, { name: "probe", url: receiver.url(path), events: ["*"] });
    const live = await api.call<{ ok: boolean; message: string }>(
      "POST",
      `/api/webhooks/${sid}/${hook.id}/test`,
    );
    expect(live.status).toBe(200);
    expect(live.body.ok).toBe(true);
    const [entry] = await receiver.received(path);
    expect(entry).toBeDefined();
    if (!entry) return;
    expect(payloadOf(entry)).toMatchObject({ event: "webhook.test", sessionId: sid });
    expect(standardSignatureValid(hook.secret, entry)).toBe(true);
    expect(legacySignatureValid(hook.secret, entry)).toBe(true);

    await receiver.kill();
    try {
      const down = await api.call<{ ok: boolean; message: string }>(
        "POST",
        `/api/webhooks/${sid}/${hook.id}/test`,
      );
      expect(down.body.ok).toBe(false);
      expect(down.body.message).toMatch(/\S/);
    } finally {
      await receiver.restart();
    }
    const back = await api.call<{ ok: boolean; message: string }>(
      "POST",
      `/api/webhooks/${sid}/${hook.id}/test`,
    );
    expect(back.body.ok).toBe(true);
    expect((await listWebhooks(api, sid)).find((w) => w.id === hook.id)?.isActive).toBe(true);
    expect(documentedChecks(hook.secret, entry)).toEqual({ standard: true, legacy: true });
  });
});
