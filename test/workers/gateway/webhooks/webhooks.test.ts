import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { verifyLegacySignature, verifyWebhook } from "../../../../docs/examples/verify-webhook.mjs";
import { openWebhookSecret } from "../../../../workers/webhooks/secrets";
import { asKey, call } from "../../helpers";

import {
  createWebhook,
  type Envelope,
  newSession,
  type Owner,
  owner,
  ownerWithSession,
  type SessionRef,
  URL_OK,
  type Webhook,
} from "./helpers";

/** `ref`: a session, or the bare public or internal id of one. */
const list = (key: string, ref: SessionRef | string) =>
  call<Envelope<Webhook[]>>("GET", `/api/webhooks/${typeof ref === "string" ? ref : ref.sessionId}`, {
    headers: asKey(key),
  });

const row = (id: string) =>
  env.DB.prepare("SELECT * FROM webhooks WHERE id = ?")
    .bind(id)
    .first<{ name: string; url: string; secret: string; is_active: number; session_id: string | null }>();

/** The secret D1 holds for the webhook, opened: it is stored sealed, never as given. */
async function storedSecret(id: string): Promise<string | undefined> {
  const stored = await env.DB.prepare("SELECT secret, secret_sealed FROM webhooks WHERE id = ?")
    .bind(id)
    .first<{ secret: string; secret_sealed: number }>();
  if (!stored) return undefined;
  expect(stored.secret_sealed).toBe(1);
  return openWebhookSecret(env.SECRETS_MASTER_KEY, { id, secret: stored.secret, secretSealed: true });
}

const webhooksOf = async (userId: string) =>
  env.DB.prepare("SELECT count(*) AS n FROM webhooks WHERE user_id = ?").bind(userId).first<number>("n");

/** The endpoint copy the session's Durable Object delivers to. */
const endpointsInObject = (session: SessionRef) =>
  runInDurableObject(env.SESSION.getByName(session.id), (_, state) =>
    state.storage.sql
      .exec<{ id: string; url: string; is_active: number }>(
        "SELECT id, url, is_active FROM webhook_endpoints ORDER BY id",
      )
      .toArray(),
  );

describe("webhooks: create, list, update, delete", () => {
  it("shows a generated whsec_ secret once and never again", async () => {
    const { alice, session } = await ownerWithSession();
    const created = await createWebhook(alice.key, session, {
      events: ["message.status", "message.received"],
    });
    expect(created).toMatchObject({
      name: "CRM",
      url: URL_OK,
      sessionId: session.sessionId,
      events: ["message.received", "message.status"],
      isActive: true,
      disabledReason: null,
      secretSet: true,
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect((await row(created.id))?.secret).not.toContain(created.secret);
    expect(await storedSecret(created.id)).toBe(created.secret);

    const listed = await list(alice.key, session);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).not.toHaveProperty("secret");
    expect(JSON.stringify(listed.body)).not.toContain(created.secret);
    // The internal id works in the path as well as the public one.
    expect((await list(alice.key, session.id)).body.data).toHaveLength(1);
  });

  it("keeps a given secret, updates any subset without echoing it, deletes, and pushes each change", async () => {
    const { alice, session } = await ownerWithSession();
    const created = await createWebhook(alice.key, session, { secret: "my-own-secret-123", events: ["*"] });
    expect(created.secret).toBe("my-own-secret-123");
    expect(created.events).toEqual(["*"]);
    expect(await endpointsInObject(session)).toEqual([{ id: created.id, url: URL_OK, is_active: 1 }]);

    const path = `/api/webhooks/${session.sessionId}/${created.id}`;
    const updated = await call<Envelope<Webhook>>("PUT", path, {
      body: { name: "CRM v2", events: ["group.update", "*"], secret: "rotated-secret-456", isActive: false },
      headers: asKey(alice.key),
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.data).toMatchObject({ name: "CRM v2", events: ["*"], isActive: false, url: URL_OK });
    expect(JSON.stringify(updated.body)).not.toContain("secret-456");
    expect(await storedSecret(created.id)).toBe("rotated-secret-456");
    expect(await endpointsInObject(session)).toEqual([{ id: created.id, url: URL_OK, is_active: 0 }]);

    const deleted = await call<Envelope<{ id: string }>>("DELETE", path, { headers: asKey(alice.key) });
    expect(deleted.status).toBe(200);
    expect(await row(created.id)).toBeNull();
    expect((await list(alice.key, session)).body.data).toEqual([]);
    expect(await endpointsInObject(session)).toEqual([]);
    expect((await call("DELETE", path, { headers: asKey(alice.key) })).status).toBe(404);
  });

  it("clears disabledReason when the webhook is activated again", async () => {
    const { alice, session } = await ownerWithSession();
    const created = await createWebhook(alice.key, session);
    await env.DB.prepare("UPDATE webhooks SET is_active = 0, disabled_reason = '410 Gone' WHERE id = ?")
      .bind(created.id)
      .run();
    expect((await list(alice.key, session)).body.data[0]).toMatchObject({
      isActive: false,
      disabledReason: "410 Gone",
    });
    const res = await call<Envelope<Webhook>>("PUT", `/api/webhooks/${session.sessionId}/${created.id}`, {
      body: { isActive: true },
      headers: asKey(alice.key),
    });
    expect(res.body.data).toMatchObject({ isActive: true, disabledReason: null });
  });
});

describe("webhooks: validation", () => {
  const invalidCreates: [string, Record<string, unknown>][] = [
    ["no name", { name: undefined }],
    ["blank name", { name: "  " }],
    ["no url", { url: undefined }],
    ["no events", { events: undefined }],
    ["empty events", { events: [] }],
    ["unknown field", { retries: 3 }],
    ["short secret", { secret: "short" }],
    ["whsec_ secret that is not base64", { secret: "whsec_not base64!" }],
    ["not a URL", { url: "not a url" }],
    ["not http(s)", { url: "ftp://files.example.com/in" }],
    ["credentials in the URL", { url: "https://user:pass@hooks.example.com/" }],
    ["a private address", { url: "http://10.0.0.1/hook" }],
    ["the metadata address", { url: "http://169.254.169.254/latest/meta-data" }],
    ["a mapped private IPv6", { url: "http://[::ffff:192.168.1.1]/" }],
    ["an intranet name", { url: "http://intranet/hook" }],
    ["an internal domain", { url: "https://metadata.google.internal/" }],
  ];

  it.each(invalidCreates)("refuses %s with 400 and stores nothing", async (_, change) => {
    const { alice, session } = await ownerWithSession();
    const body = { name: "CRM", url: URL_OK, events: ["message.received"], ...change };
    const res = await call<Envelope<null>>("POST", `/api/webhooks/${session.sessionId}`, {
      body,
      headers: asKey(alice.key),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.status).toBe(false);
    expect(await webhooksOf(alice.userId)).toBe(0);
  });

  it("names the unknown events", async () => {
    const { alice, session } = await ownerWithSession();
    const res = await call<Envelope<null>>("POST", `/api/webhooks/${session.sessionId}`, {
      body: { name: "CRM", url: URL_OK, events: ["message.received", "message.exploded", "presence"] },
      headers: asKey(alice.key),
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain("unknown events: message.exploded, presence");
  });

  it("allows the loopback hosts WEBHOOK_ALLOWED_HOSTS lists (127.0.0.1, localhost in tests)", async () => {
    const { alice, session } = await ownerWithSession();
    await createWebhook(alice.key, session, { url: "http://127.0.0.1:8787/hook" });
    await createWebhook(alice.key, session, { url: "http://localhost:3000/hook" });
    const v6 = await call("POST", `/api/webhooks/${session.sessionId}`, {
      body: { name: "v6", url: "http://[::1]:3000/hook", events: ["*"] },
      headers: asKey(alice.key),
    });
    expect(v6.status).toBe(400);
  });

  it("refuses bad updates and changes nothing", async () => {
    const { alice, session } = await ownerWithSession();
    const created = await createWebhook(alice.key, session);
    const path = `/api/webhooks/${session.sessionId}/${created.id}`;
    for (const body of [
      {},
      { url: "http://192.168.0.10/" },
      { events: [] },
      { events: ["nope"] },
      { owner: "x" },
    ]) {
      const res = await call("PUT", path, { body, headers: asKey(alice.key) });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect(await row(created.id)).toMatchObject({ name: "CRM", url: URL_OK, is_active: 1 });
  });

  it("caps the delivery log page at 200", async () => {
    const { alice, session } = await ownerWithSession();
    const created = await createWebhook(alice.key, session);
    const base = `/api/webhooks/${session.sessionId}/${created.id}/deliveries`;
    expect((await call("GET", `${base}?limit=201`, { headers: asKey(alice.key) })).status).toBe(400);
    const empty = await call("GET", base, { headers: asKey(alice.key) });
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ status: true, data: [], total: 0, limit: 50, offset: 0 });
  });
});

describe("webhooks: who may see and change them", () => {
  it("answers 404 for another user's session, as for an unknown one", async () => {
    const alice = await owner();
    const mallory = await owner();
    const session = await newSession(alice.key);
    const created = await createWebhook(alice.key, session);
    const base = `/api/webhooks/${session.sessionId}`;
    const attempts: [string, string, unknown?][] = [
      ["GET", base],
      ["POST", base, { name: "x", url: URL_OK, events: ["*"] }],
      ["PUT", `${base}/${created.id}`, { name: "pwned" }],
      ["DELETE", `${base}/${created.id}`],
      ["POST", `${base}/${created.id}/test`],
      ["GET", `${base}/${created.id}/deliveries`],
      ["POST", `${base}/${created.id}/deliveries/d1/redeliver`],
    ];
    for (const [method, path, body] of attempts) {
      const res = await call<Envelope<null>>(method, path, { body, headers: asKey(mallory.key) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.message).toBe("Session not found");
    }
    expect((await call("GET", "/api/webhooks/sess_unknown", { headers: asKey(alice.key) })).status).toBe(404);
    expect(await row(created.id)).toMatchObject({ name: "CRM" });
    expect(await webhooksOf(alice.userId)).toBe(1);
  });

  it("answers 404 for another user's webhook or another session's, through the caller's own session", async () => {
    const alice = await owner();
    const mallory = await owner();
    const aliceSession = await newSession(alice.key);
    const aliceOther = await newSession(alice.key);
    const mallorySession = await newSession(mallory.key);
    const target = await createWebhook(alice.key, aliceSession);
    const cases: [Owner, SessionRef][] = [
      [mallory, mallorySession],
      [alice, aliceOther],
    ];
    for (const [caller, via] of cases) {
      const base = `/api/webhooks/${via.sessionId}/${target.id}`;
      for (const [method, path, body] of [
        ["PUT", base, { name: "pwned", url: "https://evil.example.net/" }],
        ["DELETE", base, undefined],
        ["POST", `${base}/test`, undefined],
        ["GET", `${base}/deliveries`, undefined],
        ["POST", `${base}/deliveries/d1/redeliver`, undefined],
      ] as const) {
        const res = await call(method, path, { body, headers: asKey(caller.key) });
        expect(res.status, `${method} ${path}`).toBe(404);
      }
      expect((await list(caller.key, via)).body.data).toEqual([]);
    }
    expect(await row(target.id)).toMatchObject({ name: "CRM", url: URL_OK, is_active: 1 });
  });

  it("lists a global webhook for every session of its owner and pushes it to each", async () => {
    const alice = await owner();
    const first = await newSession(alice.key);
    const second = await newSession(alice.key);
    const own = await createWebhook(alice.key, first, { name: "first only" });
    const global = await createWebhook(alice.key, first, { name: "everything", global: true, events: ["*"] });
    expect(global.sessionId).toBeNull();
    expect((await row(global.id))?.session_id).toBeNull();
    expect((await list(alice.key, first)).body.data.map((w) => w.id)).toEqual([own.id, global.id]);
    expect((await list(alice.key, second)).body.data.map((w) => [w.id, w.sessionId])).toEqual([
      [global.id, null],
    ]);
    expect((await endpointsInObject(second)).map((e) => e.id)).toEqual([global.id]);
    // Managed through any of the owner's sessions, and the change reaches all of them.
    const res = await call("PUT", `/api/webhooks/${second.sessionId}/${global.id}`, {
      body: { url: "https://other.example.com/in" },
      headers: asKey(alice.key),
    });
    expect(res.status).toBe(200);
    for (const session of [first, second]) {
      const urls = (await endpointsInObject(session)).filter((e) => e.id === global.id).map((e) => e.url);
      expect(urls).toEqual(["https://other.example.com/in"]);
    }
    const bob = await owner();
    expect((await list(bob.key, await newSession(bob.key))).body.data).toEqual([]);
  });

  it("keeps the owner's global webhooks out of reach of a user the session is shared with", async () => {
    const alice = await owner();
    const staff = await owner("STAFF");
    const session = await newSession(alice.key);
    const shared = await call("POST", `/api/sessions/${session.sessionId}/access`, {
      body: { email: staff.email },
      headers: asKey(alice.key),
    });
    expect(shared.status).toBe(201);
    const global = await createWebhook(alice.key, session, { global: true });
    const own = await createWebhook(staff.key, session, { name: "staff's" });
    expect((await list(staff.key, session)).body.data.map((w) => w.id)).toEqual([own.id]);
    const put = await call("PUT", `/api/webhooks/${session.sessionId}/${global.id}`, {
      body: { name: "pwned" },
      headers: asKey(staff.key),
    });
    expect(put.status).toBe(404);
    const add = await call("POST", `/api/webhooks/${session.sessionId}`, {
      body: { name: "g", url: URL_OK, events: ["*"], global: true },
      headers: asKey(staff.key),
    });
    expect(add.status).toBe(403);
    expect(await row(global.id)).toMatchObject({ name: "CRM" });
  });
});

type TestOutcome = { status: boolean; ok: boolean; message: string; data: { statusCode: number | null } };

const runTest = async (key: string, session: SessionRef, webhookId: string) => {
  const res = await call<TestOutcome>("POST", `/api/webhooks/${session.sessionId}/${webhookId}/test`, {
    headers: asKey(key),
  });
  expect(res.status).toBe(200);
  expect(res.body.status).toBe(res.body.ok);
  return res.body;
};

/** Answers outbound requests to URL_OK as `answer` says; everything else goes to the network. */
function stubReceiver(answer: (url: string) => Response) {
  const received: { url: string; headers: Headers; body: string; redirect: string }[] = [];
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    if (!request.url.startsWith(URL_OK)) return realFetch(input, init);
    const { url, headers, redirect } = request;
    received.push({ url, headers, redirect, body: await request.text() });
    return answer(url);
  });
  return received;
}

describe("webhooks: test delivery", () => {
  afterEach(() => vi.restoreAllMocks());

  it("delivers a signed webhook.test that the documented snippet verifies, and reports ok", async () => {
    const { alice, session } = await ownerWithSession();
    const { id, secret = "" } = await createWebhook(alice.key, session);
    const received = stubReceiver(() => new Response("thanks", { status: 202 }));
    expect(await runTest(alice.key, session, id)).toMatchObject({ ok: true, data: { statusCode: 202 } });
    expect(received).toHaveLength(1);
    const [{ headers, body, redirect }] = received as [(typeof received)[number]];
    expect(redirect).toBe("manual");
    expect(verifyWebhook(secret, headers, body)).toMatchObject({
      event: "webhook.test",
      sessionId: session.sessionId,
      data: { webhookId: id },
    });
    expect(verifyLegacySignature(secret, headers.get("x-webhook-signature"), body)).toBe(true);
    expect(() => verifyWebhook(secret, headers, body.replace("test", "tset"))).toThrow();
    expect(verifyLegacySignature(secret, headers.get("x-webhook-signature"), `${body} `)).toBe(false);
  });

  it("reports ok false with the reason when the endpoint fails, redirects or cannot be reached", async () => {
    const { alice, session } = await ownerWithSession();
    const messageFor = async (url: string) => {
      const { id } = await createWebhook(alice.key, session, { url });
      const outcome = await runTest(alice.key, session, id);
      expect(outcome.ok).toBe(false);
      return outcome.message;
    };
    // Nothing listens on port 1: a real network failure.
    expect(await messageFor("http://127.0.0.1:1/hook")).toMatch(/^Test delivery failed: /);
    stubReceiver((url) =>
      url.endsWith("/moved")
        ? new Response(null, { status: 302, headers: { location: "http://10.0.0.1/" } })
        : new Response("no", { status: 500 }),
    );
    expect(await messageFor(`${URL_OK}/moved`)).toContain("redirect");
    expect(await messageFor(`${URL_OK}/broken`)).toContain("HTTP 500");
    // A target that became private after creation is refused before any request leaves.
    const stale = await createWebhook(alice.key, session);
    await env.DB.prepare("UPDATE webhooks SET url = 'http://10.1.2.3/' WHERE id = ?").bind(stale.id).run();
    expect((await runTest(alice.key, session, stale.id)).message).toContain("target refused");
  });
});
