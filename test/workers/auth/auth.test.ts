import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  asKey,
  asSession,
  BASE,
  call,
  count,
  createUser,
  dispatch,
  freshAddress,
  generateKey,
  login,
  ROOT,
  rootSession,
  uniqueEmail,
} from "../helpers";

function cookieAttributes(setCookie: string): Map<string, string> {
  const [, ...attrs] = setCookie.split(";").map((part) => part.trim());
  return new Map(
    attrs.map((attr) => {
      const [name = "", value = ""] = attr.split("=");
      return [name.toLowerCase(), value];
    }),
  );
}

async function loginDirect(url: string, environment: string): Promise<Response> {
  const request = new Request(url, {
    method: "POST",
    headers: { "content-type": "application/json", "CF-Connecting-IP": freshAddress() },
    body: JSON.stringify(ROOT),
  });
  return dispatch(request, { ...env, ENVIRONMENT: environment });
}

describe("login and the session cookie", () => {
  it("creates the first SUPERADMIN from ADMIN_EMAIL / ADMIN_PASSWORD and logs in", async () => {
    const res = await call<{
      data: { user: { email: string; role: string }; expires: string; csrfToken: string };
    }>("POST", "/api/auth/login", { body: { email: "ROOT@example.test", password: ROOT.password } });
    expect(res.status).toBe(200);
    expect(res.body.data.user).toMatchObject({ email: ROOT.email, role: "SUPERADMIN" });
    expect(new Date(res.body.data.expires).getTime()).toBeGreaterThan(Date.now() + 6 * 24 * 3600 * 1000);
    expect(res.body.data.csrfToken).toMatch(/^[\w-]{43}$/);
    const row = await env.DB.prepare("SELECT password_hash FROM users WHERE email = ?")
      .bind(ROOT.email)
      .first<{
        password_hash: string;
      }>();
    expect(row?.password_hash).toMatch(/^pbkdf2_sha256\$100000\$/);
    expect(row?.password_hash).not.toContain(ROOT.password);
  });

  it("sets an opaque HttpOnly, SameSite=Lax cookie with an expiry, stored only as a hash", async () => {
    const res = await call("POST", "/api/auth/login", {
      body: ROOT,
      headers: { "CF-Connecting-IP": freshAddress() },
    });
    const setCookie = res.headers.get("set-cookie") ?? "";
    const [pair = ""] = setCookie.split(";");
    const token = pair.slice("web-auth.session-token=".length);
    expect(pair.startsWith("web-auth.session-token=")).toBe(true);
    // <Keyring shard tag>.<32 random bytes, base64url>
    expect(token).toMatch(/^[0-9A-Za-z]{2}\.[\w-]{43}$/);
    const attrs = cookieAttributes(setCookie);
    expect(attrs.has("httponly")).toBe(true);
    expect(attrs.get("samesite")).toBe("Lax");
    expect(attrs.get("path")).toBe("/");
    expect(Number(attrs.get("max-age"))).toBe(7 * 24 * 3600);
    expect(attrs.has("expires")).toBe(true);
    expect(attrs.has("secure")).toBe(false); // plain-HTTP test environment
    const plaintext = await env.DB.prepare("SELECT count(*) AS n FROM web_sessions WHERE token_hash = ?")
      .bind(token)
      .first<{ n: number }>();
    expect(plaintext?.n).toBe(0);
  });

  it("still accepts a session token from before tokens carried a shard tag, until it expires", async () => {
    const root = await rootSession();
    const userId = root.userId;
    const legacy = "A".repeat(43);
    const hash = Array.from(
      new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(legacy))),
    )
      .map((byte) => byte.toString(16).padStart(2, "0"))
      .join("");
    const insert = (id: string, tokenHash: string, expiresAt: number) =>
      env.DB.prepare(
        "INSERT INTO web_sessions (id, token_hash, user_id, expires_at, created_at) VALUES (?, ?, ?, ?, ?)",
      )
        .bind(id, tokenHash, userId, expiresAt, Date.now())
        .run();
    await insert(crypto.randomUUID(), hash, Date.now() + 60_000);
    const cookie = { cookie: `web-auth.session-token=${legacy}` };
    expect((await call("GET", "/api/auth/session", { headers: cookie })).status).toBe(200);
    await env.DB.prepare("UPDATE web_sessions SET expires_at = ? WHERE token_hash = ?")
      .bind(Date.now() - 1, hash)
      .run();
    expect((await call("GET", "/api/auth/session", { headers: cookie })).status).toBe(401);
  });

  it("marks the cookie Secure in production and on HTTPS", async () => {
    const production = await loginDirect(`${BASE}/api/auth/login`, "production");
    expect(production.status).toBe(200);
    expect(cookieAttributes(production.headers.get("set-cookie") ?? "").has("secure")).toBe(true);
    const https = await loginDirect("https://switchboard.test/api/auth/login", "development");
    expect(cookieAttributes(https.headers.get("set-cookie") ?? "").has("secure")).toBe(true);
  });

  it("answers a wrong password and an unknown e-mail with the same 401", async () => {
    const wrong = await call("POST", "/api/auth/login", {
      body: { email: ROOT.email, password: "not-the-password" },
      headers: { "CF-Connecting-IP": freshAddress() },
    });
    const unknown = await call("POST", "/api/auth/login", {
      body: { email: uniqueEmail("ghost"), password: "not-the-password" },
      headers: { "CF-Connecting-IP": freshAddress() },
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body).toEqual({
      status: false,
      message: "Unauthorized",
      error: "Invalid e-mail or password",
    });
    expect(wrong.headers.get("set-cookie")).toBeNull();
  });

  it("does not create the bootstrap admin for the right e-mail with the wrong password", async () => {
    const res = await call("POST", "/api/auth/login", {
      body: { email: ROOT.email, password: "guess-guess-guess" },
      headers: { "CF-Connecting-IP": freshAddress() },
    });
    expect(res.status).toBe(401);
    const admins = await env.DB.prepare("SELECT count(*) AS n FROM users WHERE role = 'SUPERADMIN'").first<{
      n: number;
    }>();
    expect(admins?.n).toBeLessThanOrEqual(1);
  });
});

describe("authentication paths", () => {
  it("authenticates GET /api/auth/session by cookie, by API key, and refuses none or a wrong one", async () => {
    const session = await rootSession();
    const key = await generateKey(session);

    const byCookie = await call<{ user: { email: string }; expires: string | null }>(
      "GET",
      "/api/auth/session",
      {
        headers: { cookie: session.cookie },
      },
    );
    expect(byCookie.status).toBe(200);
    expect(byCookie.body.user).toEqual({
      id: session.userId,
      name: "Administrator",
      email: ROOT.email,
      image: null,
      role: "SUPERADMIN",
    });
    expect(byCookie.body.expires).toMatch(/^\d{4}-\d\d-\d\dT/);

    const byKey = await call<{ user: { email: string }; expires: null }>("GET", "/api/auth/session", {
      headers: asKey(key),
    });
    expect(byKey.status).toBe(200);
    expect(byKey.body).toMatchObject({ user: { email: ROOT.email }, expires: null });

    const unauthorized = { status: false, message: "Unauthorized", error: "Missing or invalid credentials" };
    const none = await call("GET", "/api/auth/session");
    expect(none.status).toBe(401);
    expect(none.body).toEqual(unauthorized);
    const tampered = `${key.slice(0, -1)}${key.endsWith("x") ? "y" : "x"}`;
    for (const bad of [tampered, "swb_short", "", "Bearer nonsense", key.toUpperCase()]) {
      const res = await call("GET", "/api/auth/session", { headers: asKey(bad) });
      expect(res.status, bad).toBe(401);
      expect(res.body).toEqual(unauthorized);
    }
    const forgedCookie = await call("GET", "/api/auth/session", {
      headers: { cookie: "web-auth.session-token=forged-token-value" },
    });
    expect(forgedCookie.status).toBe(401);
  });

  it("uses X-API-Key exclusively when present, even next to a valid cookie", async () => {
    const session = await rootSession();
    const res = await call("GET", "/api/auth/session", {
      headers: { cookie: session.cookie, "X-API-Key": "swb_wrong" },
    });
    expect(res.status).toBe(401);
  });

  it("requires the CSRF token on cookie requests that change state, and changes nothing without it", async () => {
    const session = await rootSession();
    const before = await count("users");
    const body = { name: "Csrf Test", email: uniqueEmail("csrf"), password: "long-enough-pw" };

    const missing = await call("POST", "/api/users", { body, headers: { cookie: session.cookie } });
    expect(missing.status).toBe(403);
    expect(missing.body).toMatchObject({ status: false, message: "Forbidden" });
    expect(String((missing.body as { error: string }).error)).toContain("CSRF");

    const wrong = await call("POST", "/api/users", {
      body,
      headers: { cookie: session.cookie, "X-CSRF-Token": "not-the-token" },
    });
    expect(wrong.status).toBe(403);
    const other = await rootSession(); // another session's token does not fit this cookie
    const crossed = await call("POST", "/api/users", {
      body,
      headers: { cookie: session.cookie, "X-CSRF-Token": other.csrf },
    });
    expect(crossed.status).toBe(403);
    expect(await count("users")).toBe(before);

    const withToken = await call("POST", "/api/users", { body, headers: asSession(session) });
    expect(withToken.status).toBe(201);
    expect(await count("users")).toBe(before + 1);
  });

  it("needs no CSRF token with an API key, and GET /api/auth/csrf returns the session's token", async () => {
    const session = await rootSession();
    const key = await generateKey(session);
    const res = await call("POST", "/api/users", {
      body: { name: "Key User", email: uniqueEmail("key"), password: "long-enough-pw" },
      headers: asKey(key),
    });
    expect(res.status).toBe(201);

    const csrf = await call<{ csrfToken: string }>("GET", "/api/auth/csrf", {
      headers: { cookie: session.cookie },
    });
    expect(csrf.status).toBe(200);
    expect(csrf.body).toEqual({ csrfToken: session.csrf });
    const withKey = await call("GET", "/api/auth/csrf", { headers: asKey(key) });
    expect(withKey.status).toBe(400);
    expect((await call("GET", "/api/auth/csrf")).status).toBe(401);
  });

  it("logout ends the session: the cookie stops working and is cleared", async () => {
    const session = await rootSession();
    const withoutCsrf = await call("POST", "/api/auth/logout", { headers: { cookie: session.cookie } });
    expect(withoutCsrf.status).toBe(403);
    expect((await call("GET", "/api/auth/session", { headers: { cookie: session.cookie } })).status).toBe(
      200,
    );

    const res = await call("POST", "/api/auth/logout", { headers: asSession(session) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: true, message: "Logged out", data: null });
    expect(res.headers.get("set-cookie")).toMatch(/^web-auth\.session-token=;.*Max-Age=0/);
    expect((await call("GET", "/api/auth/session", { headers: { cookie: session.cookie } })).status).toBe(
      401,
    );
    // Idempotent: logging out again with the dead cookie is fine.
    expect((await call("POST", "/api/auth/logout", { headers: { cookie: session.cookie } })).status).toBe(
      200,
    );
  });

  it("signs a user out everywhere when their password changes", async () => {
    const root = await rootSession();
    const user = await createUser("OWNER", root);
    const res = await call("PATCH", `/api/users/${user.userId}`, {
      body: { password: "a-brand-new-password" },
      headers: asSession(root),
    });
    expect(res.status).toBe(200);
    expect((await call("GET", "/api/auth/session", { headers: { cookie: user.cookie } })).status).toBe(401);
    await login(user.email, "a-brand-new-password");
  });
});

describe("login throttling", () => {
  const attempt = (email: string, password: string, address: string) =>
    call("POST", "/api/auth/login", { body: { email, password }, headers: { "CF-Connecting-IP": address } });

  it("holds back one address for an account after 5 failures, and only that address", async () => {
    const root = await rootSession();
    const user = await createUser("STAFF", root);
    const attacker = freshAddress();
    for (let i = 0; i < 6; i++)
      expect((await attempt(user.email, "wrong-password", attacker)).status).toBe(401);
    const blocked = await attempt(user.email, user.password, attacker);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(blocked.body).toMatchObject({ status: false, message: "Too many requests" });
    expect(blocked.headers.get("set-cookie")).toBeNull();
    // The owner, elsewhere, is not locked out by someone else's burst.
    expect((await attempt(user.email, user.password, freshAddress())).status).toBe(200);
  });

  it("checks at most 6 of 100 simultaneous guesses from one address: the count is taken atomically", async () => {
    const root = await rootSession();
    const user = await createUser("STAFF", root);
    const address = freshAddress();
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => attempt(user.email, "wrong-password", address)),
    );
    const checked = answers.filter((answer) => answer.status === 401).length;
    const refused = answers.filter((answer) => answer.status === 429).length;
    expect(checked + refused).toBe(100);
    expect(checked).toBeLessThanOrEqual(6);
  });

  it("slows a client address down after 20 failures across different accounts", async () => {
    const address = freshAddress();
    for (let i = 0; i < 21; i++) {
      const res = await call("POST", "/api/auth/login", {
        body: { email: uniqueEmail("spray"), password: "wrong-password" },
        headers: { "CF-Connecting-IP": address },
      });
      expect(res.status).toBe(401);
    }
    const blocked = await call("POST", "/api/auth/login", {
      body: ROOT,
      headers: { "CF-Connecting-IP": address },
    });
    expect(blocked.status).toBe(429);
    const elsewhere = await call("POST", "/api/auth/login", {
      body: ROOT,
      headers: { "CF-Connecting-IP": freshAddress() },
    });
    expect(elsewhere.status).toBe(200);
  });
});
