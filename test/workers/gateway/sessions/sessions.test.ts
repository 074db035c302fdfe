import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { asKey, call, count, createUser, generateKey, rootSession } from "../../helpers";

type SessionBody = {
  id: string;
  sessionId: string;
  status: string;
  state: string;
  userId: string;
  name: string;
};
type Envelope<T> = { status: boolean; message: string; data: T; error?: string };

async function owner() {
  const user = await createUser("OWNER");
  return { ...user, key: await generateKey(user) };
}

async function createSession(key: string, body: Record<string, unknown> = { name: "Support line" }) {
  const res = await call<Envelope<SessionBody>>("POST", "/api/sessions", { body, headers: asKey(key) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

describe("sessions: create, list, detail", () => {
  it("creates a stopped session with a generated sessionId, or the one given", async () => {
    const alice = await owner();
    const generated = await createSession(alice.key);
    expect(generated).toMatchObject({
      name: "Support line",
      status: "Disconnected",
      state: "stopped",
      userId: alice.userId,
    });
    expect(generated.sessionId).toMatch(/^sess_[0-9A-Za-z]{1,10}$/);
    const named = await createSession(alice.key, {
      name: "Sales",
      sessionId: `sales-${crypto.randomUUID().slice(0, 6)}`,
    });
    expect(named.sessionId).toMatch(/^sales-/);
    const dup = await call("POST", "/api/sessions", {
      body: { name: "x", sessionId: named.sessionId },
      headers: asKey(alice.key),
    });
    expect(dup.status).toBe(409);
  });

  it("rejects bad bodies with 400 and writes nothing", async () => {
    const alice = await owner();
    const before = await count("sessions");
    for (const body of [{}, { name: "" }, { name: "x", sessionId: "has space" }, { name: "x", extra: 1 }]) {
      const res = await call("POST", "/api/sessions", { body, headers: asKey(alice.key) });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect(await count("sessions")).toBe(before);
  });

  it("shows the detail with live fields by sessionId or internal id", async () => {
    const alice = await owner();
    const created = await createSession(alice.key);
    for (const ref of [created.sessionId, created.id]) {
      const res = await call<Envelope<Record<string, unknown>>>("GET", `/api/sessions/${ref}`, {
        headers: asKey(alice.key),
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        sessionId: created.sessionId,
        status: "Disconnected",
        state: "stopped",
        uptime: 0,
        messageCount: 0,
        hasInstance: false,
        me: null,
        botConfig: { sessionId: created.sessionId, enabled: true, botMode: "OWNER" },
        webhooks: [],
        _count: { contacts: 0, messages: 0, groups: 0, autoReplies: 0, scheduledMessages: 0 },
      });
    }
    const missing = await call("GET", "/api/sessions/nope-nope", { headers: asKey(alice.key) });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ status: false, message: "Session not found", error: "Session not found" });
  });
});

describe("sessions: tenancy and sharing", () => {
  it("lists only own and shared sessions; SUPERADMIN sees all", async () => {
    const alice = await owner();
    const bob = await owner();
    const a = await createSession(alice.key, { name: "alice's" });
    const b = await createSession(bob.key, { name: "bob's" });
    const list = async (key: string) =>
      (await call<Envelope<SessionBody[]>>("GET", "/api/sessions", { headers: asKey(key) })).body.data.map(
        (s) => s.id,
      );
    expect(await list(alice.key)).toEqual([a.id]);
    expect(await list(bob.key)).toEqual([b.id]);
    const root = await rootSession();
    expect(await list(await generateKey(root))).toEqual(expect.arrayContaining([a.id, b.id]));
  });

  it("answers 404, as for a missing session, on every route of another user's session and changes nothing", async () => {
    const alice = await owner();
    const mallory = await owner();
    const s = await createSession(alice.key);
    const missing = { status: false, message: "Session not found", error: "Session not found" };
    const attempts = [
      call("GET", `/api/sessions/${s.sessionId}`, { headers: asKey(mallory.key) }),
      call("GET", `/api/sessions/${s.sessionId}/qr`, { headers: asKey(mallory.key) }),
      call("POST", `/api/sessions/${s.sessionId}/start`, { headers: asKey(mallory.key) }),
      call("POST", `/api/sessions/${s.sessionId}/logout`, { headers: asKey(mallory.key) }),
      call("GET", `/api/sessions/${s.sessionId}/settings`, { headers: asKey(mallory.key) }),
      call("PATCH", `/api/sessions/${s.sessionId}/settings`, {
        body: { config: { rejectCalls: true } },
        headers: asKey(mallory.key),
      }),
      call("DELETE", `/api/sessions/${s.sessionId}/settings`, { headers: asKey(mallory.key) }),
      call("GET", `/api/sessions/${s.sessionId}/bot-config`, { headers: asKey(mallory.key) }),
      call("POST", `/api/sessions/${s.sessionId}/bot-config`, {
        body: { enabled: false },
        headers: asKey(mallory.key),
      }),
      call("GET", `/api/sessions/${s.sessionId}/access`, { headers: asKey(mallory.key) }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual(missing);
    }
    const row = await env.DB.prepare("SELECT config, state FROM sessions WHERE id = ?").bind(s.id).first();
    expect(row).toEqual({ config: "{}", state: "stopped" });
    // Only the defaults stored at creation: the refused POST changed nothing.
    expect(
      await env.DB.prepare("SELECT enabled FROM bot_configs WHERE session_id = ?").bind(s.id).all(),
    ).toMatchObject({ results: [{ enabled: 1 }] });
  });
});

describe("sessions: settings, bot-config, qr, delete", () => {
  it("merges settings instead of replacing them", async () => {
    const alice = await owner();
    const s = await createSession(alice.key);
    await call("PATCH", `/api/sessions/${s.sessionId}/settings`, {
      body: { config: { readReceipts: false } },
      headers: asKey(alice.key),
    });
    const second = await call<Envelope<{ config: Record<string, boolean> }>>(
      "PATCH",
      `/api/sessions/${s.sessionId}/settings`,
      {
        body: { config: { rejectCalls: true } },
        headers: asKey(alice.key),
      },
    );
    expect(second.status).toBe(200);
    expect(second.body.data.config).toEqual({ readReceipts: false, rejectCalls: true });
    const got = await call<Envelope<{ config: unknown }>>("GET", `/api/sessions/${s.sessionId}/settings`, {
      headers: asKey(alice.key),
    });
    expect(got.body.data.config).toEqual({ readReceipts: false, rejectCalls: true });
    const bad = await call("PATCH", `/api/sessions/${s.sessionId}/settings`, {
      body: { config: { readReceipts: "yes" } },
      headers: asKey(alice.key),
    });
    expect(bad.status).toBe(400);
  });

  it("returns bot-config defaults, applies partial updates, validates whole JIDs and masks the remove.bg key", async () => {
    const alice = await owner();
    const s = await createSession(alice.key);
    const defaults = await call<Envelope<Record<string, unknown>>>(
      "GET",
      `/api/sessions/${s.sessionId}/bot-config`,
      { headers: asKey(alice.key) },
    );
    expect(defaults.body.data).toMatchObject({
      id: expect.any(String),
      enabled: true,
      botMode: "OWNER",
      autoReplyMode: "ALL",
      prefix: "#",
      maxStickerDuration: 10,
    });

    const first = await call<Envelope<Record<string, unknown>>>(
      "POST",
      `/api/sessions/${s.sessionId}/bot-config`,
      {
        body: {
          botMode: "SPECIFIC",
          // A person by phone number or by LID (a chat WhatsApp addresses only by LID).
          botAllowedJids: ["628123456789@s.whatsapp.net", "201234567890123@lid"],
          removeBgApiKey: "rbg-secret-1234",
        },
        headers: asKey(alice.key),
      },
    );
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({
      botMode: "SPECIFIC",
      enabled: true,
      removeBgApiKey: "****",
      removeBgApiKeySet: true,
    });
    const second = await call<Envelope<Record<string, unknown>>>(
      "POST",
      `/api/sessions/${s.sessionId}/bot-config`,
      {
        body: { enabled: false },
        headers: asKey(alice.key),
      },
    );
    expect(second.body.data).toMatchObject({
      enabled: false,
      botMode: "SPECIFIC",
      botAllowedJids: ["628123456789@s.whatsapp.net", "201234567890123@lid"],
      removeBgApiKey: "****",
      removeBgApiKeySet: true,
    });
    expect(JSON.stringify(second.body)).not.toContain("rbg-secret");

    for (const body of [
      { botAllowedJids: ["628"] },
      { botBlockedJids: ["abc@lid"] },
      { botMode: "SOME" },
      { unknown: true },
    ]) {
      const res = await call("POST", `/api/sessions/${s.sessionId}/bot-config`, {
        body,
        headers: asKey(alice.key),
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const listed = await call<Envelope<{ botConfig: { enabled: boolean } | null }[]>>(
      "GET",
      "/api/sessions",
      { headers: asKey(alice.key) },
    );
    expect(listed.body.data[0]?.botConfig?.enabled).toBe(false);
  });

  it("answers 404 for a QR before any was issued, 400 for unknown actions", async () => {
    const alice = await owner();
    const s = await createSession(alice.key);
    const qr = await call("GET", `/api/sessions/${s.sessionId}/qr`, { headers: asKey(alice.key) });
    expect(qr.status).toBe(404);
    expect(qr.body).toMatchObject({ status: false, message: "QR code not available yet" });
    const action = await call("POST", `/api/sessions/${s.sessionId}/explode`, { headers: asKey(alice.key) });
    expect(action.status).toBe(400);
    const pairWithoutBridge = await call("POST", `/api/sessions/${s.sessionId}/pair`, {
      body: { phoneNumber: "628123456789" },
      headers: asKey(alice.key),
    });
    expect(pairWithoutBridge.status).toBe(503);
    expect(pairWithoutBridge.body).toMatchObject({ status: false, message: "Session not ready" });
  });

  it("deletes the session with its grants and bot config", async () => {
    const alice = await owner();
    const bob = await owner();
    const s = await createSession(alice.key);
    await call("POST", `/api/sessions/${s.sessionId}/bot-config`, {
      body: { enabled: false },
      headers: asKey(alice.key),
    });
    await call("POST", `/api/sessions/${s.sessionId}/access`, {
      body: { email: bob.email },
      headers: asKey(alice.key),
    });
    const res = await call("DELETE", `/api/sessions/${s.sessionId}/settings`, { headers: asKey(alice.key) });
    expect(res.body).toEqual({ status: true, message: "Session deleted successfully", data: null });
    expect((await call("GET", `/api/sessions/${s.sessionId}`, { headers: asKey(alice.key) })).status).toBe(
      404,
    );
    for (const table of ["bot_configs", "session_access"]) {
      expect(
        await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE session_id = ?`).bind(s.id).first("n"),
      ).toBe(0);
    }
  });
});
