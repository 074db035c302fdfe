// The dashboard's sign-in, sign-out, CSRF, assets and the boundary with the API.
import { SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BASE, createUser, fetchWorker, freshAddress } from "../helpers";
import { browse, fieldError, formError, submit, textOf } from "./helpers";

async function loginForm(): Promise<{ token: string; cookie: string }> {
  const page = await browse(null, "/login?next=%2Fsessions");
  expect(page.status).toBe(200);
  const token = page.html.match(/name="_csrf" value="([^"]+)"/)?.[1] ?? "";
  const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  expect(token).not.toBe("");
  return { token, cookie };
}

describe("dashboard sign-in", () => {
  it("sends a visitor to the sign-in page and back to where they were going", async () => {
    const page = await browse(null, "/sessions?x=1");
    expect(page.status).toBe(302);
    expect(page.location).toBe("/login?next=%2Fsessions%3Fx%3D1");
  });

  it("signs in with the form, sets the session cookie and redirects to next; signs out", async () => {
    const user = await createUser("OWNER");
    const { token, cookie } = await loginForm();
    const res = await submit(
      null,
      "/login?next=%2Fsessions",
      { _csrf: token, email: user.email, password: user.password },
      { cookie, "CF-Connecting-IP": freshAddress() },
    );
    expect(res.status).toBe(303);
    expect(res.location).toBe("/sessions");
    const sessionCookie = (res.headers.get("set-cookie") ?? "").match(/web-auth\.session-token=[^;]+/)?.[0];
    expect(sessionCookie).toBeDefined();
    const home = await browse({ ...user, cookie: sessionCookie ?? "" }, "/");
    expect(home.status).toBe(200);
    expect(textOf(home.html)).toContain("Overview");

    const csrf = home.html.match(/name="_csrf" value="([^"]+)"/)?.[1] ?? "";
    const signedIn = { ...user, cookie: sessionCookie ?? "", csrf };
    const noToken = await submit({ ...signedIn, csrf: "forged" }, "/logout");
    expect(noToken.status).toBe(403);
    expect((await browse(signedIn, "/")).status).toBe(200);
    const out = await submit(signedIn, "/logout");
    expect(out.status).toBe(303);
    expect(out.location).toBe("/login");
    expect((await browse(signedIn, "/")).status).toBe(302);
  });

  it("tells the user, once, after signing in, that their account was locked meanwhile (issue 25 M-e)", async () => {
    const user = await createUser("OWNER");
    const lockedAt = Date.now() - 60_000;
    const details = { attempts: 20, source: "2001:db8:1:2::/64", lockedUntil: lockedAt + 15 * 60_000 };
    await env.DB.prepare(
      "INSERT INTO account_events (id, user_id, kind, details, created_at) VALUES (?, ?, 'login_locked', ?, ?)",
    )
      .bind(crypto.randomUUID(), user.userId, JSON.stringify(details), lockedAt)
      .run();
    const signIn = async () => {
      const { token, cookie } = await loginForm();
      const res = await submit(
        null,
        "/login?next=%2F",
        { _csrf: token, email: user.email, password: user.password },
        { cookie, "CF-Connecting-IP": freshAddress() },
      );
      expect(res.status).toBe(303);
      const cookies = res.headers.get("set-cookie") ?? "";
      const session = cookies.match(/web-auth\.session-token=[^;]+/)?.[0] ?? "";
      const flash = cookies.match(/dashboard\.flash=[^;]+/)?.[0];
      return { session, flash };
    };
    const first = await signIn();
    expect(first.flash).toBeDefined();
    const home = await browse({ ...user, cookie: `${first.session}; ${first.flash}` }, "/");
    expect(textOf(home.html)).toMatch(
      /locked for 15 minutes after 20 failed attempts \(the last from 2001:db8:1:2::\/64\)/,
    );
    expect((await signIn()).flash).toBeUndefined();
  });

  it("shows the server's message next to the field on a wrong password or a bad e-mail", async () => {
    const user = await createUser("OWNER");
    const { token, cookie } = await loginForm();
    const headers = { cookie, "CF-Connecting-IP": freshAddress() };
    const wrong = await submit(
      null,
      "/login",
      { _csrf: token, email: user.email, password: "nope" },
      headers,
    );
    expect(wrong.status).toBe(401);
    expect(fieldError(wrong.html, "password")).toBe("Wrong e-mail or password");
    expect(wrong.html).toContain(`value="${user.email}"`);
    expect(wrong.headers.get("set-cookie") ?? "").not.toContain("web-auth.session-token");

    const bad = await submit(null, "/login", { _csrf: token, email: "not-an-email", password: "x" }, headers);
    expect(bad.status).toBe(400);
    expect(fieldError(bad.html, "email")).toMatch(/email/i);
  });

  it("refuses a sign-in form without its double-submit token", async () => {
    const user = await createUser("OWNER");
    const { token } = await loginForm();
    const res = await submit(null, "/login", { _csrf: token, email: user.email, password: user.password });
    expect(res.status).toBe(403);
    expect(formError(res.html)).toMatch(/expired/);
    expect(res.headers.get("set-cookie") ?? "").not.toContain("web-auth.session-token");
  });

  it("keeps the sign-in token when a second sign-in page is served (another tab, a favicon redirect)", async () => {
    const user = await createUser("OWNER");
    const { token, cookie } = await loginForm();
    const again = await SELF.fetch(`${BASE}/login`, { headers: { cookie } });
    expect((await again.text()).includes(`value="${token}"`)).toBe(true);
    const res = await submit(
      null,
      "/login",
      { _csrf: token, email: user.email, password: user.password },
      { cookie, "CF-Connecting-IP": freshAddress() },
    );
    expect(res.status).toBe(303);
    const icon = await SELF.fetch(`${BASE}/favicon.ico`, { redirect: "manual" });
    expect(icon.status).toBe(200);
  });

  it("does not redirect anywhere but this site after sign-in, however the other site is spelled", async () => {
    // Browsers drop tabs and newlines inside URLs and read "\\" as "/": each of these is //evil.example.
    for (const next of [
      "//evil.example/",
      "/\t/evil.example",
      "/\n/evil.example",
      "/\\evil.example",
      "/%09/x",
    ]) {
      const user = await createUser("OWNER");
      const { token, cookie } = await loginForm();
      const res = await submit(
        null,
        `/login?next=${encodeURIComponent(next)}`,
        { _csrf: token, email: user.email, password: user.password },
        { cookie, "CF-Connecting-IP": freshAddress() },
      );
      expect(res.status, next).toBe(303);
      expect(res.location === "/" || res.location === "/%09/x", `${next} → ${res.location}`).toBe(true);
      expect(res.location).not.toMatch(/^\/[\s\\/]/);
    }
  });
});

describe("dashboard plumbing", () => {
  it("serves its stylesheet and script from the Worker with a strict CSP on pages", async () => {
    const login = await browse(null, "/login");
    const css = login.html.match(/href="(\/assets\/dashboard-[^"]+\.css)"/)?.[1];
    const js = login.html.match(/src="(\/assets\/dashboard-[^"]+\.js)"/)?.[1];
    expect(css && js).toBeTruthy();
    const style = await SELF.fetch(`${BASE}${css}`);
    expect(style.headers.get("content-type")).toContain("text/css");
    expect(style.headers.get("cache-control")).toContain("immutable");
    const script = await SELF.fetch(`${BASE}${js}`);
    expect(await script.text()).toContain("data-session-watch");
    expect(login.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(login.html).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
  });

  it("leaves the API's answers alone and shows an HTML 404 for unknown pages", async () => {
    const api = await fetchWorker(`${BASE}/api/health`);
    expect(api.headers.get("content-type")).toContain("application/json");
    const unknownApi = await fetchWorker(`${BASE}/api/no-such-route`, { headers: { "X-API-Key": "x" } });
    expect(unknownApi.headers.get("content-type")).toContain("application/json");
    const user = await createUser("OWNER");
    const page = await browse(user, "/no-such-page");
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toContain("text/html");
  });
});
