// Sharing a session: roles (a viewer reads; an operator also sends and manages webhooks; only the
// owner deletes, logs out or re-shares), revocation that reaches the webhooks the person created, and
// answers that never tell whether an e-mail has an account or which one is the SUPERADMIN's.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { asKey, call, ROOT } from "../../helpers";
import { createWebhook, newSession, owner } from "../webhooks/helpers";

type Json = Record<string, unknown>;

const share = (key: string, sessionId: string, body: Json) =>
  call<Json>("POST", `/api/sessions/${sessionId}/access`, { headers: asKey(key), body });

describe("session sharing", () => {
  it("gives a viewer reads only, an operator sends and webhooks, and neither deletes, logs out or re-shares", async () => {
    const alice = await owner();
    const viewer = await owner("STAFF");
    const operator = await owner("STAFF");
    const s = await newSession(alice.key);
    expect((await share(alice.key, s.sessionId, { email: viewer.email, role: "viewer" })).status).toBe(201);
    expect((await share(alice.key, s.sessionId, { email: operator.email })).status).toBe(201);
    const as = (key: string, method: string, path: string, body?: unknown) =>
      call(method, path, { headers: asKey(key), ...(body === undefined ? {} : { body }) });

    expect((await as(viewer.key, "GET", `/api/sessions/${s.sessionId}`)).status).toBe(200);
    expect((await as(viewer.key, "GET", `/api/sessions/${s.sessionId}/settings`)).status).toBe(200);
    for (const [method, path, body] of [
      ["PATCH", `/api/sessions/${s.sessionId}/settings`, { config: { rejectCalls: true } }],
      ["POST", `/api/sessions/${s.sessionId}/start`, undefined],
      ["POST", `/api/messages/${s.sessionId}/628123456789@s.whatsapp.net/send`, { message: { text: "hi" } }],
      [
        "POST",
        `/api/webhooks/${s.sessionId}`,
        { name: "spy", url: "https://hooks.example.com/v", events: ["*"] },
      ],
    ] as const) {
      const res = await as(viewer.key, method, path, body);
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    const hook = await createWebhook(operator.key, s);
    expect(hook.id).toBeTruthy();
    for (const key of [viewer.key, operator.key]) {
      expect((await as(key, "DELETE", `/api/sessions/${s.sessionId}/settings`)).status).toBe(403);
      expect((await as(key, "POST", `/api/sessions/${s.sessionId}/logout`)).status).toBe(403);
      expect((await as(key, "GET", `/api/sessions/${s.sessionId}/access`)).status).toBe(403);
      expect((await share(key, s.sessionId, { email: "third@example.test" })).status).toBe(403);
    }
    const still = await env.DB.prepare("SELECT count(*) AS n FROM sessions WHERE id = ?")
      .bind(s.id)
      .first("n");
    expect(still).toBe(1);
  });

  it("revoking a share disables the webhooks that person created on the session", async () => {
    const alice = await owner();
    const bob = await owner("STAFF");
    const s = await newSession(alice.key);
    await share(alice.key, s.sessionId, { email: bob.email, role: "operator" });
    const hook = await createWebhook(bob.key, s);
    const mine = await createWebhook(alice.key, s);
    const revoked = await call("DELETE", `/api/sessions/${s.sessionId}/access`, {
      headers: asKey(alice.key),
      body: { email: bob.email },
    });
    expect(revoked.status).toBe(200);
    const row = (id: string) =>
      env.DB.prepare("SELECT is_active, disabled_reason FROM webhooks WHERE id = ?").bind(id).first<Json>();
    expect(await row(hook.id)).toEqual({ is_active: 0, disabled_reason: "access revoked" });
    expect(await row(mine.id)).toEqual({ is_active: 1, disabled_reason: null });
    expect((await call("GET", `/api/sessions/${s.sessionId}`, { headers: asKey(bob.key) })).status).toBe(404);
  });

  it("answers alike whether or not an e-mail has an account, or is the SUPERADMIN's", async () => {
    const alice = await owner();
    const bob = await owner("STAFF");
    const s = await newSession(alice.key);
    const answers = [];
    for (const email of [bob.email, "nobody-here@example.test", ROOT.email]) {
      const res = await share(alice.key, s.sessionId, { email, role: "viewer" });
      expect(res.status, email).toBe(201);
      answers.push(res.body);
    }
    const shapes = answers.map((body) => {
      const data = body.data as Json;
      return { keys: Object.keys(data).sort(), message: body.message, role: data.role };
    });
    expect(new Set(shapes.map((shape) => JSON.stringify(shape))).size).toBe(1);
    const listed = await call<{ data: Json[] }>("GET", `/api/sessions/${s.sessionId}/access`, {
      headers: asKey(alice.key),
    });
    expect(listed.body.data.map((entry) => Object.keys(entry).sort())).toEqual(
      Array(3).fill(["createdAt", "email", "role", "sessionId"]),
    );
    expect(JSON.stringify(listed.body)).not.toMatch(/SUPERADMIN|userId|"name"/);
    expect((await share(alice.key, s.sessionId, { email: bob.email, role: "viewer" })).status).toBe(409);
    expect((await share(alice.key, s.sessionId, { email: bob.email, role: "operator" })).status).toBe(200);
  });
});
