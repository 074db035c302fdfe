// Issue 27's scoped keys over REST: created with scopes and an optional limit (one session or one
// company) and expiry, shown once, SHA-256 at rest, revocable; a request outside the scope answers 403
// naming the scope and changes nothing; a limited key reaches only its session or company.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../../workers/auth/crypto";
import { boardUser, seedCompany, seedIssue } from "../control/helpers";
import { Link } from "../fake-bridge";
import { asKey, BASE, call, count, fetchWorker } from "../helpers";
import { eventually } from "../patience";

interface ScopedKey {
  id: string;
  name: string;
  scopes: string[];
  sessionId: string | null;
  companyId: string | null;
  expiresAt: string | null;
  key: string | null;
}
type Envelope<T> = { data: T; error?: string; message?: string };

async function createKey(fullKey: string, body: Record<string, unknown>): Promise<ScopedKey> {
  const res = await call<Envelope<ScopedKey>>("POST", "/api/user/keys", { headers: asKey(fullKey), body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

async function newSession(fullKey: string): Promise<{ id: string; slug: string }> {
  const res = await call<Envelope<{ id: string; sessionId: string }>>("POST", "/api/sessions", {
    headers: asKey(fullKey),
    body: { name: `s-${crypto.randomUUID().slice(0, 6)}` },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { id: res.body.data.id, slug: res.body.data.sessionId };
}

const errorOf = (res: { body: unknown }): string => String((res.body as { error?: unknown }).error);

const keyOf = (created: ScopedKey): string => {
  if (!created.key) throw new Error("no key in the create answer");
  return created.key;
};

describe("scoped API keys (issue 27)", () => {
  it("are shown once, stored as SHA-256, listed without the key, and revoked at once", async () => {
    const user = await boardUser();
    const created = await createKey(user.key, { name: "reader", scopes: ["read"] });
    const key = keyOf(created);
    expect(key).toMatch(/^swb_/);
    expect(created).toMatchObject({ name: "reader", scopes: ["read"], sessionId: null, companyId: null });

    const row = await env.DB.prepare("SELECT * FROM scoped_api_keys WHERE id = ?")
      .bind(created.id)
      .first<Record<string, unknown>>();
    expect(row?.key_hash).toBe(await sha256Hex(key));
    expect(JSON.stringify(row)).not.toContain(key);

    const listed = await call<Envelope<ScopedKey[]>>("GET", "/api/user/keys", { headers: asKey(user.key) });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((k) => [k.id, k.key])).toEqual([[created.id, null]]);

    expect((await call("GET", "/api/sessions", { headers: asKey(key) })).status).toBe(200);
    // The full key keeps working beside it.
    expect((await call("GET", "/api/sessions", { headers: asKey(user.key) })).status).toBe(200);

    const stranger = await boardUser();
    const foreign = await call("DELETE", `/api/user/keys/${created.id}`, { headers: asKey(stranger.key) });
    expect(foreign.status).toBe(404);
    expect((await call("GET", "/api/sessions", { headers: asKey(key) })).status).toBe(200);

    const revoked = await call("DELETE", `/api/user/keys/${created.id}`, { headers: asKey(user.key) });
    expect(revoked.status).toBe(200);
    expect((await call("GET", "/api/sessions", { headers: asKey(key) })).status).toBe(401);
    expect((await call("DELETE", `/api/user/keys/${created.id}`, { headers: asKey(user.key) })).status).toBe(
      404,
    );
  });

  it("refuse bad input: no or unknown scopes, both limits, a past expiry, another user's session or company", async () => {
    const user = await boardUser();
    const stranger = await boardUser();
    const theirSession = await newSession(stranger.key);
    const theirCompany = await seedCompany(stranger);
    const before = await count("scoped_api_keys");
    const attempts: Array<[Record<string, unknown>, number]> = [
      [{ name: "x", scopes: [] }, 400],
      [{ name: "x", scopes: ["write"] }, 400],
      [{ name: "x", scopes: ["read", "read"] }, 400],
      [{ name: "x", scopes: ["read"], sessionId: "a", companyId: "b" }, 400],
      [{ name: "x", scopes: ["read"], expiresAt: new Date(Date.now() - 60_000).toISOString() }, 422],
      [{ name: "x", scopes: ["read"], sessionId: theirSession.slug }, 404],
      [{ name: "x", scopes: ["read"], companyId: theirCompany.id }, 404],
    ];
    for (const [body, status] of attempts) {
      const res = await call("POST", "/api/user/keys", { headers: asKey(user.key), body });
      expect(res.status, JSON.stringify({ body, answer: res.body })).toBe(status);
    }
    expect(await count("scoped_api_keys")).toBe(before);
  });

  it("a request outside the key's scope answers 403 naming the scope and changes nothing", async () => {
    const user = await boardUser();
    const company = await seedCompany(user);
    const session = await newSession(user.key);
    const reader = keyOf(await createKey(user.key, { name: "r", scopes: ["read"] }));
    const sender = keyOf(await createKey(user.key, { name: "s", scopes: ["read", "send"] }));
    const controller = keyOf(await createKey(user.key, { name: "c", scopes: ["control"] }));

    const send = await call("POST", `/api/messages/${session.slug}/15550001111@s.whatsapp.net/send`, {
      headers: asKey(reader),
      body: { message: "hi" },
    });
    expect(send.status).toBe(403);
    expect(errorOf(send)).toContain('"send" scope');

    const issuesBefore = await count("issues");
    const issue = await call("POST", `/api/companies/${company.id}/issues`, {
      headers: asKey(sender),
      body: { title: "Not with this key" },
    });
    expect(issue.status).toBe(403);
    expect(errorOf(issue)).toContain('"control" scope');
    expect(await count("issues")).toBe(issuesBefore);
    const allowed = await call("POST", `/api/companies/${company.id}/issues`, {
      headers: asKey(controller),
      body: { title: "With a control key" },
    });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(201);

    const sessionsBefore = await count("sessions");
    for (const key of [reader, sender, controller]) {
      const created = await call("POST", "/api/sessions", { headers: asKey(key), body: { name: "nope" } });
      expect(created.status).toBe(403);
      expect(errorOf(created)).toContain('"admin" scope');
      const minted = await call("POST", "/api/user/keys", {
        headers: asKey(key),
        body: { name: "escalate", scopes: ["admin"] },
      });
      expect(minted.status).toBe(403);
    }
    expect(await count("sessions")).toBe(sessionsBefore);
    // A control key cannot read (no `read`), and reads nothing.
    expect((await call("GET", "/api/sessions", { headers: asKey(controller) })).status).toBe(403);
  });

  it("a key limited to one session reaches only it: others 404, the listing shows only it", async () => {
    const user = await boardUser();
    const mine = await newSession(user.key);
    const other = await newSession(user.key);
    const limited = keyOf(
      await createKey(user.key, { name: "one", scopes: ["admin"], sessionId: mine.slug }),
    );
    const listed = await call<Envelope<Array<{ sessionId: string }>>>("GET", "/api/sessions", {
      headers: asKey(limited),
    });
    expect(listed.body.data.map((s) => s.sessionId)).toEqual([mine.slug]);
    expect((await call("GET", `/api/sessions/${mine.slug}`, { headers: asKey(limited) })).status).toBe(200);
    expect((await call("GET", `/api/sessions/${other.slug}`, { headers: asKey(limited) })).status).toBe(404);
    const deleted = await call("DELETE", `/api/sessions/${other.slug}/settings`, { headers: asKey(limited) });
    expect(deleted.status).toBe(404);
    expect((await call("GET", `/api/sessions/${other.slug}`, { headers: asKey(user.key) })).status).toBe(200);
    // Outside the messaging routes it reaches nothing: no company, no new session, no keys.
    expect((await call("GET", "/api/companies", { headers: asKey(limited) })).status).toBe(403);
    expect(
      (await call("POST", "/api/sessions", { headers: asKey(limited), body: { name: "another" } })).status,
    ).toBe(403);
    expect(
      (
        await call("POST", "/api/user/keys", {
          headers: asKey(limited),
          body: { name: "wider", scopes: ["admin"] },
        })
      ).status,
    ).toBe(403);
  });

  it("a key limited to one company reaches only it: others 404, the membership view shows only it", async () => {
    const user = await boardUser();
    const mine = await seedCompany(user);
    const other = await seedCompany(user);
    const otherIssue = await seedIssue(other);
    const limited = keyOf(
      await createKey(user.key, { name: "one", scopes: ["read", "control"], companyId: mine.id }),
    );
    const listed = await call<Array<{ id: string }>>("GET", "/api/companies", { headers: asKey(limited) });
    expect(listed.status).toBe(200);
    expect(listed.body.map((c) => c.id)).toEqual([mine.id]);
    expect((await call("GET", `/api/companies/${mine.id}`, { headers: asKey(limited) })).status).toBe(200);
    expect((await call("GET", `/api/companies/${other.id}`, { headers: asKey(limited) })).status).toBe(404);
    expect((await call("GET", `/api/issues/${otherIssue.id}`, { headers: asKey(limited) })).status).toBe(404);
    const comment = await call("POST", `/api/issues/${otherIssue.id}/comments`, {
      headers: asKey(limited),
      body: { body: "not here" },
    });
    expect(comment.status).toBe(404);
    expect(await count(`issue_comments WHERE issue_id = '${otherIssue.id}'`)).toBe(0);
    expect((await call("GET", "/api/sessions", { headers: asKey(limited) })).status).toBe(403);
  });

  it("an expired key answers 401 from the moment it expires, cached or not", async () => {
    const user = await boardUser();
    const soon = new Date(Date.now() + 1_500).toISOString();
    const key = keyOf(await createKey(user.key, { name: "brief", scopes: ["read"], expiresAt: soon }));
    expect((await call("GET", "/api/sessions", { headers: asKey(key) })).status).toBe(200);
    await eventually(
      async () => (await call("GET", "/api/sessions", { headers: asKey(key) })).status === 401,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(soon));
    const listed = await call<Envelope<Array<ScopedKey & { expired: boolean }>>>("GET", "/api/user/keys", {
      headers: asKey(user.key),
    });
    expect(listed.body.data.map((k) => k.expired)).toEqual([true]);
  });

  it("revoking a key closes the WebSockets it opened", async () => {
    const user = await boardUser();
    const session = await newSession(user.key);
    const created = await createKey(user.key, { name: "watcher", scopes: ["read"], sessionId: session.slug });
    const res = await fetchWorker(`${BASE}/api/sessions/${session.slug}/events`, {
      headers: { Upgrade: "websocket", ...asKey(keyOf(created)) },
    });
    expect(res.status).toBe(101);
    const link = new Link(res.webSocket as WebSocket);
    await link.next((f) => f.type === "session");
    const revoked = await call("DELETE", `/api/user/keys/${created.id}`, { headers: asKey(user.key) });
    expect(revoked.status).toBe(200);
    expect((await link.closedWith()).code).toBe(4401);
  });

  it("a key's expiry closes the WebSockets it opened when it comes", async () => {
    const user = await boardUser();
    const session = await newSession(user.key);
    const expiresAt = new Date(Date.now() + 1_500).toISOString();
    const created = await createKey(user.key, { name: "brief watcher", scopes: ["read"], expiresAt });
    const res = await fetchWorker(`${BASE}/api/sessions/${session.slug}/events`, {
      headers: { Upgrade: "websocket", ...asKey(keyOf(created)) },
    });
    expect(res.status).toBe(101);
    const link = new Link(res.webSocket as WebSocket);
    await link.next((f) => f.type === "session");
    const closed = await link.closedWith();
    expect(closed).toEqual({ code: 4401, reason: "key expired: sign in again" });
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));
  });
});
