import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  asKey,
  asSession,
  call,
  count,
  createUser,
  generateKey,
  ROOT,
  rootSession,
  uniqueEmail,
} from "../helpers";

type UserBody = { id: string; email: string; role: string; name: string; createdAt: string };

describe("/api/users role checks", () => {
  it.each(["OWNER", "STAFF"] as const)("refuses every user-management route to %s with 403", async (role) => {
    const user = await createUser(role);
    const key = await generateKey(user);
    const before = await count("users");
    const attempts = [
      call("GET", "/api/users", { headers: asKey(key) }),
      call("POST", "/api/users", {
        body: { name: "X", email: uniqueEmail(), password: "long-enough-pw" },
        headers: asKey(key),
      }),
      call("PATCH", `/api/users/${user.userId}`, { body: { role: "SUPERADMIN" }, headers: asKey(key) }),
      call("DELETE", `/api/users/${user.userId}`, { headers: asKey(key) }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        status: false,
        message: "Forbidden",
        error: "This operation requires the role SUPERADMIN",
      });
    }
    expect(await count("users")).toBe(before);
    const row = await env.DB.prepare("SELECT role FROM users WHERE id = ?")
      .bind(user.userId)
      .first<{ role: string }>();
    expect(row?.role).toBe(role);
  });
});

describe("/api/users as SUPERADMIN", () => {
  it("applies role and e-mail changes to API-key callers at once (no stale cached principal)", async () => {
    const root = await rootSession();
    const admin = await createUser("SUPERADMIN", root);
    const key = await generateKey(admin);
    expect((await call("GET", "/api/users", { headers: asKey(key) })).status).toBe(200); // now cached
    const newEmail = uniqueEmail("renamed");
    const demoted = await call("PATCH", `/api/users/${admin.userId}`, {
      body: { role: "STAFF", email: newEmail },
      headers: asSession(root),
    });
    expect(demoted.status).toBe(200);
    expect((await call("GET", "/api/users", { headers: asKey(key) })).status).toBe(403);
    const me = await call<{ user: { email: string; role: string } }>("GET", "/api/auth/session", {
      headers: asKey(key),
    });
    expect(me.body.user).toMatchObject({ email: newEmail, role: "STAFF" });
  });
  it("creates, lists, updates and deletes users; never returns password hashes", async () => {
    const root = await rootSession();
    const email = uniqueEmail("crud");
    const created = await call<{ data: UserBody }>("POST", "/api/users", {
      body: { name: "Crud User", email: email.toUpperCase(), password: "long-enough-pw", role: "STAFF" },
      headers: asSession(root),
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: "Crud User", email, role: "STAFF", image: null });
    const id = created.body.data.id;

    const list = await call<{ data: UserBody[] }>("GET", "/api/users", { headers: { cookie: root.cookie } });
    expect(list.status).toBe(200);
    expect(list.body.data.map((u) => u.email)).toEqual(expect.arrayContaining([ROOT.email, email]));
    expect(JSON.stringify(list.body)).not.toMatch(/password|pbkdf2/i);

    const patched = await call<{ data: UserBody }>("PATCH", `/api/users/${id}`, {
      body: { name: "Renamed", role: "OWNER" },
      headers: asSession(root),
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ id, name: "Renamed", role: "OWNER" });

    const deleted = await call("DELETE", `/api/users/${id}`, { headers: asSession(root) });
    expect(deleted.body).toEqual({ status: true, message: "User deleted", data: null });
    expect((await call("DELETE", `/api/users/${id}`, { headers: asSession(root) })).status).toBe(404);
  });

  it("answers 409 for a duplicate e-mail (any case) and 404 for unknown ids", async () => {
    const root = await rootSession();
    const dup = await call("POST", "/api/users", {
      body: { name: "Dup", email: ROOT.email.toUpperCase(), password: "long-enough-pw" },
      headers: asSession(root),
    });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ status: false, message: "Conflict" });

    const other = await createUser("STAFF", root);
    const clash = await call("PATCH", `/api/users/${other.userId}`, {
      body: { email: ROOT.email },
      headers: asSession(root),
    });
    expect(clash.status).toBe(409);

    const missing = await call("PATCH", "/api/users/does-not-exist", {
      body: { name: "x" },
      headers: asSession(root),
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ status: false, message: "User not found", error: "User not found" });
  });

  it("validates bodies: short passwords, bad roles, empty patches and unknown fields change nothing", async () => {
    const root = await rootSession();
    const before = await count("users");
    const cases = [
      { name: "X", email: uniqueEmail(), password: "short" },
      { name: "X", email: uniqueEmail(), password: "long-enough-pw", role: "GOD" },
      { name: "X", email: "not-an-email", password: "long-enough-pw" },
      { name: "", email: uniqueEmail(), password: "long-enough-pw" },
    ];
    for (const body of cases) {
      const res = await call("POST", "/api/users", { body, headers: asSession(root) });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect(await count("users")).toBe(before);

    const target = await createUser("STAFF", root);
    const empty = await call("PATCH", `/api/users/${target.userId}`, { body: {}, headers: asSession(root) });
    expect(empty.status).toBe(400);
    const sneaky = await call("PATCH", `/api/users/${target.userId}`, {
      body: { name: "ok", passwordHash: "x", createdAt: 0 },
      headers: asSession(root),
    });
    expect(sneaky.status).toBe(400);
    const row = await env.DB.prepare("SELECT name FROM users WHERE id = ?")
      .bind(target.userId)
      .first<{ name: string }>();
    expect(row?.name).toBe("A STAFF");
  });

  it("never deletes or demotes the last SUPERADMIN, even under concurrent demotions", async () => {
    const root = await rootSession();
    const selfDelete = await call("DELETE", `/api/users/${root.userId}`, { headers: asSession(root) });
    expect(selfDelete.status).toBe(409);
    const selfDemote = await call("PATCH", `/api/users/${root.userId}`, {
      body: { role: "STAFF" },
      headers: asSession(root),
    });
    expect(selfDemote.status).toBe(409);

    const second = await createUser("SUPERADMIN", root);
    const results = await Promise.all([
      call("PATCH", `/api/users/${root.userId}`, { body: { role: "OWNER" }, headers: asSession(root) }),
      call("PATCH", `/api/users/${second.userId}`, { body: { role: "OWNER" }, headers: asSession(second) }),
    ]);
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409]);
    const admins = await env.DB.prepare("SELECT count(*) AS n FROM users WHERE role = 'SUPERADMIN'").first<{
      n: number;
    }>();
    expect(admins?.n).toBe(1);
  });
});
