// Webhook signing secrets at rest: sealed under SECRETS_MASTER_KEY in D1 and in the SessionDO's copy,
// shown once at creation, and still signing every delivery (queued and test) so receivers verify them
// with the secret they were given. Rows stored in plaintext before sealing existed keep working and
// are sealed by the every-minute cron. Outbound fetch is a recording fake (the object shares the
// test's isolate), as in durable-objects/messaging/webhooks/delivery.test.ts.
import {
  createExecutionContext,
  createScheduledController,
  runDurableObjectAlarm,
  runInDurableObject,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { verifyLegacySignature, verifyWebhook } from "../../../../docs/examples/verify-webhook.mjs";
import type { Outcome } from "../../../../durable-objects/messaging/context";
import type { DeliveryRecord } from "../../../../durable-objects/messaging/webhooks/types";
import { sessionObject } from "../../../../durable-objects/session/contract";
import worker from "../../../../workers";
import { type ConnectedSession, connectedSession } from "../../connected-session";
import { emit } from "../../fake-bridge";
import { asKey, call } from "../../helpers";
import type { Envelope, Webhook } from "./helpers";

type Received = { url: string; headers: Headers; body: string };

const HOST = "secrets.hooks.example.com";
const PEER = "628122200022@s.whatsapp.net";
const received: Received[] = [];
const realFetch = globalThis.fetch;

beforeAll(() => {
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    if (new URL(request.url).hostname !== HOST) return realFetch(input, init);
    received.push({ url: request.url, headers: request.headers, body: await request.text() });
    return new Response("ok");
  });
});

afterAll(() => {
  vi.restoreAllMocks();
});

afterEach(() => {
  received.length = 0;
});

type Session = ConnectedSession & { seq: number };

async function session(): Promise<Session> {
  return { ...(await connectedSession("Secrets", "628111000111@s.whatsapp.net")), seq: 2 };
}

const incoming = (s: Session, id: string) =>
  emit(s.link, 1, s.seq++, {
    kind: "message",
    live: true,
    message: {
      chat: PEER,
      sender: PEER,
      fromMe: false,
      pushName: "Peer",
      id,
      timestamp: Date.now(),
      content: { type: "text", text: id },
    },
  });

const at = (path: string) => received.filter((r) => new URL(r.url).pathname === path);

async function deliveredTo(s: Session, path: string, count: number): Promise<Received[]> {
  const deadline = Date.now() + 4_000;
  while (at(path).length < count) {
    if (Date.now() > deadline) throw new Error(`${at(path).length} of ${count} deliveries at ${path}`);
    await runDurableObjectAlarm(env.SESSION.getByName(s.id));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return at(path);
}

function expectSignedWith(secret: string, deliveries: readonly Received[]): void {
  for (const { headers, body } of deliveries) {
    expect(() => verifyWebhook(secret, headers, body)).not.toThrow();
    expect(verifyLegacySignature(secret, headers.get("x-webhook-signature"), body)).toBe(true);
  }
}

const storedSecret = async (id: string) =>
  (await env.DB.prepare("SELECT secret FROM webhooks WHERE id = ?").bind(id).first<{ secret: string }>())
    ?.secret;

/** Every secret the session's Durable Object keeps in its endpoint copy. */
const secretsInObject = (s: Session) =>
  runInDurableObject(env.SESSION.getByName(s.id), (_, state) =>
    state.storage.sql
      .exec<{ secret: string }>("SELECT secret FROM webhook_endpoints")
      .toArray()
      .map((r) => r.secret),
  );

async function createHook(s: Session, path: string, secret?: string): Promise<Webhook & { secret: string }> {
  const res = await call<Envelope<Webhook & { secret: string }>>("POST", `/api/webhooks/${s.slug}`, {
    body: { name: "Sealed", url: `https://${HOST}${path}`, events: ["message.received"], secret },
    headers: asKey(s.key),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

async function cronTick(): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: Date.now() }), env, ctx);
  await waitOnExecutionContext(ctx);
}

describe("webhook secrets at rest", () => {
  it("stores the secret sealed (D1 and the object's copy) and signs deliveries with the one shown", async () => {
    const s = await session();
    const generated = await createHook(s, "/generated");
    const chosen = await createHook(s, "/chosen", "my-own-webhook-secret");

    for (const hook of [generated, chosen]) {
      const stored = (await storedSecret(hook.id)) ?? "";
      expect(stored).not.toBe(hook.secret);
      expect(stored).not.toContain(hook.secret);
      expect(stored).toMatch(/^v1\./);
    }
    const copies = await secretsInObject(s);
    expect(copies).toHaveLength(2);
    for (const copy of copies) {
      expect(copy).not.toContain(generated.secret);
      expect(copy).not.toContain("my-own-webhook-secret");
    }

    await incoming(s, "SEALED-1");
    expectSignedWith(generated.secret, await deliveredTo(s, "/generated", 1));
    expectSignedWith(chosen.secret, await deliveredTo(s, "/chosen", 1));

    // The test delivery opens the sealed secret too.
    const test = await call<{ ok: boolean }>("POST", `/api/webhooks/${s.slug}/${generated.id}/test`, {
      headers: asKey(s.key),
    });
    expect(test.body.ok).toBe(true);
    expectSignedWith(generated.secret, at("/generated").slice(-1));

    // A rotated secret is sealed as well, and the next delivery is signed with it.
    const rotated = await call("PUT", `/api/webhooks/${s.slug}/${chosen.id}`, {
      body: { secret: "rotated-webhook-secret" },
      headers: asKey(s.key),
    });
    expect(rotated.status).toBe(200);
    expect(JSON.stringify(rotated.body)).not.toContain("rotated-webhook-secret");
    expect(await storedSecret(chosen.id)).not.toContain("rotated-webhook-secret");
    await incoming(s, "SEALED-2");
    expectSignedWith("rotated-webhook-secret", (await deliveredTo(s, "/chosen", 2)).slice(1));
  });

  it("keeps delivering with a secret stored in plaintext before sealing, and the cron seals it", async () => {
    const s = await session();
    const legacy = "legacy-plaintext-secret";
    const id = `legacy-${crypto.randomUUID()}`;
    // A row as it was stored before secrets were sealed: the columns of that time, the secret in plaintext.
    await env.DB.prepare(
      `INSERT INTO webhooks (id, user_id, session_id, name, url, secret, events, is_active, created_at, updated_at)
       VALUES (?, ?, ?, 'Legacy', ?, ?, '["message.received"]', 1, 1, 1)`,
    )
      .bind(id, s.userId, s.id, `https://${HOST}/legacy`, legacy)
      .run();
    // Any edit pushes the session's endpoints to its object.
    const edited = await call("PUT", `/api/webhooks/${s.slug}/${id}`, {
      body: { name: "Legacy, edited" },
      headers: asKey(s.key),
    });
    expect(edited.status).toBe(200);
    await incoming(s, "LEGACY-1");
    expectSignedWith(legacy, await deliveredTo(s, "/legacy", 1));

    await cronTick();
    const stored = (await storedSecret(id)) ?? "";
    expect(stored).not.toContain(legacy);
    expect(stored).toMatch(/^v1\./);
    expect((await secretsInObject(s)).join(" ")).not.toContain(legacy);
    await incoming(s, "LEGACY-2");
    expectSignedWith(legacy, (await deliveredTo(s, "/legacy", 2)).slice(1));
  });

  it("logs a secret that does not open as a failed attempt, sends nothing, and does not blame the receiver", async () => {
    const s = await session();
    const object = sessionObject(env, s.id);
    // Sealed under some other key (or damaged): as after SECRETS_MASTER_KEY was changed.
    const foreign = "v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    await object.setWebhooks(s.id, [
      {
        id: "unopened",
        url: `https://${HOST}/unopened`,
        secret: foreign,
        secretSealed: true,
        events: ["message.received"],
        isActive: true,
      },
    ]);
    await incoming(s, "UNOPENED-1");
    const deadline = Date.now() + 4_000;
    let record: DeliveryRecord | undefined;
    while (!record?.attempts) {
      if (Date.now() > deadline) throw new Error("no attempt logged");
      await runDurableObjectAlarm(object);
      const input = { webhookId: "unopened", limit: 10, offset: 0 };
      const outcome = (await object.call(s.id, "webhook.deliveries", input)) as Outcome<{
        items: DeliveryRecord[];
      }>;
      record = outcome.ok ? outcome.data.items[0] : undefined;
    }
    expect(record).toMatchObject({ status: "pending", attempts: 1 });
    expect(record.error).toMatch(/^signing secret could not be opened/);
    expect(at("/unopened")).toEqual([]);
    const streak = await runInDurableObject(object, (_, state) =>
      state.storage.sql.exec("SELECT first_failure_at AS f FROM webhook_endpoints").one(),
    );
    expect(streak.f).toBeNull();
  });
});
