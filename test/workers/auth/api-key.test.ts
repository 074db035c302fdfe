import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { asKey, asSession, call, createUser, generateKey, rootSession } from "../helpers";

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

describe("the user's API key", () => {
  it("is shown once: the POST returns it, every GET afterwards hides it", async () => {
    const user = await createUser("OWNER");
    const before = await call("GET", "/api/user/api-key", { headers: { cookie: user.cookie } });
    expect(before.status).toBe(200);
    expect(before.body).toEqual({
      status: true,
      message: "API key status",
      data: { apiKey: null, apiKeySet: false, hidden: false },
    });

    const created = await call<{ data: { apiKey: string; apiKeySet: boolean; hidden: boolean } }>(
      "POST",
      "/api/user/api-key",
      { headers: asSession(user) },
    );
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ apiKeySet: true, hidden: false });
    expect(created.body.data.apiKey).toMatch(/^swb_[0-9A-Za-z]{51}$/);

    const after = await call("GET", "/api/user/api-key", { headers: asKey(created.body.data.apiKey) });
    expect(after.body).toMatchObject({ data: { apiKey: null, apiKeySet: true, hidden: true } });
    expect(JSON.stringify(after.body)).not.toContain(created.body.data.apiKey);
  });

  it("is stored only as its SHA-256 digest", async () => {
    const user = await createUser("STAFF");
    const key = await generateKey(user);
    const row = await env.DB.prepare("SELECT * FROM api_keys WHERE user_id = ?").bind(user.userId).first();
    expect(row?.key_hash).toBe(await sha256Hex(key));
    expect(JSON.stringify(row)).not.toContain(key.slice(12, -4));
    expect(row?.display_prefix).toBe(key.slice(0, 12));
  });

  it("regenerating invalidates the previous key at once", async () => {
    const user = await createUser("OWNER");
    const first = await generateKey(user);
    expect((await call("GET", "/api/auth/session", { headers: asKey(first) })).status).toBe(200);
    const second = await call<{ data: { apiKey: string } }>("POST", "/api/user/api-key", {
      headers: asKey(first),
    });
    expect(second.status).toBe(201);
    expect((await call("GET", "/api/auth/session", { headers: asKey(first) })).status).toBe(401);
    expect((await call("GET", "/api/auth/session", { headers: asKey(second.body.data.apiKey) })).status).toBe(
      200,
    );
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE user_id = ?")
      .bind(user.userId)
      .first<{ n: number }>();
    expect(rows?.n).toBe(1);
  });

  it("concurrent regenerations leave exactly one working key", async () => {
    const user = await createUser("OWNER");
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        call<{ data: { apiKey: string } }>("POST", "/api/user/api-key", { headers: asSession(user) }),
      ),
    );
    const keys = results.map((r) => r.body.data.apiKey);
    const working = [];
    for (const key of keys) {
      if ((await call("GET", "/api/auth/session", { headers: asKey(key) })).status === 200) working.push(key);
    }
    expect(working).toHaveLength(1);
  });

  it("can be revoked; a revoked key answers 401", async () => {
    const user = await createUser("STAFF");
    const key = await generateKey(user);
    const revoked = await call("DELETE", "/api/user/api-key", { headers: asSession(user) });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ message: "API key revoked", data: { apiKeySet: false } });
    expect((await call("GET", "/api/auth/session", { headers: asKey(key) })).status).toBe(401);
    const again = await call("DELETE", "/api/user/api-key", { headers: asSession(user) });
    expect(again.body).toMatchObject({ message: "No API key was set" });
  });

  it("stops working when its user is deleted", async () => {
    const root = await rootSession();
    const user = await createUser("OWNER", root);
    const key = await generateKey(user);
    expect((await call("DELETE", `/api/users/${user.userId}`, { headers: asSession(root) })).status).toBe(
      200,
    );
    expect((await call("GET", "/api/auth/session", { headers: asKey(key) })).status).toBe(401);
    expect((await call("GET", "/api/auth/session", { headers: { cookie: user.cookie } })).status).toBe(401);
  });
});
