// The dashboard's API key page (the key shown once) and the SUPERADMIN's users page.
import { describe, expect, it } from "vitest";
import {
  asKey,
  asSession,
  call,
  count,
  createUser,
  rootSession,
  type Session,
  uniqueEmail,
} from "../helpers";
import { browse, fieldError, type PageResponse, submit, textOf } from "./helpers";

type Envelope<T> = { status: boolean; data: T };
type User = { id: string; email: string; role: string; name: string };

async function follow(viewer: Session, res: PageResponse): Promise<PageResponse> {
  expect(res.status, res.html.slice(0, 500)).toBe(303);
  const flash = (res.headers.get("set-cookie") ?? "").match(/dashboard\.flash=[^;]*/)?.[0];
  return browse(
    { ...viewer, cookie: flash ? `${viewer.cookie}; ${flash}` : viewer.cookie },
    res.location ?? "/",
  );
}

const flashOf = (html: string) => html.match(/<p class="flash" role="status">([\s\S]*?)<\/p>/)?.[1] ?? null;
const shownKey = (html: string) =>
  html.match(/id="new-api-key" class="secret" readonly="" value="([^"]+)"/)?.[1];

describe("API key page", () => {
  it("generates a key, shows it once in the response (not a redirect), and it works", async () => {
    const viewer = await createUser("OWNER");
    const before = await browse(viewer, "/api-key");
    expect(before.status).toBe(200);
    expect(textOf(before.html)).toContain("You have no API key.");
    expect(before.html).not.toContain(">Revoke key</button>");

    const res = await submit(viewer, "/api-key");
    expect(res.status).toBe(200);
    expect(res.location).toBeNull();
    expect(res.headers.get("cache-control")).toBe("no-store");
    const key = shownKey(res.html) ?? "";
    expect(key.length).toBeGreaterThan(20);
    expect(res.headers.get("set-cookie") ?? "").not.toContain(key);
    expect(res.html).toContain(
      '<button type="button" class="secondary" data-copy="new-api-key">Copy</button>',
    );
    expect(textOf(res.html)).toContain("it will not be shown again");
    expect((await call("GET", "/api/sessions", { headers: asKey(key) })).status).toBe(200);

    const again = await browse(viewer, "/api-key");
    expect(again.html).not.toContain(key);
    expect(shownKey(again.html)).toBeUndefined();
    expect(textOf(again.html)).toContain("You have an API key.");
  });

  it("revokes the key after a confirmation, with a flash", async () => {
    const viewer = await createUser("OWNER");
    const key = shownKey((await submit(viewer, "/api-key")).html) ?? "";
    const page = await browse(viewer, "/api-key");
    expect(page.html).toMatch(
      /<form method="post" action="\/api-key\/revoke" class="inline" data-confirm="[^"]+">/,
    );
    const revoked = await submit(viewer, "/api-key/revoke");
    expect(revoked.location).toBe("/api-key");
    const after = await follow(viewer, revoked);
    expect(flashOf(after.html)).toBe("API key revoked");
    expect(textOf(after.html)).toContain("You have no API key.");
    expect((await call("GET", "/api/sessions", { headers: asKey(key) })).status).toBe(401);
  });

  it("changes nothing without the form's CSRF token", async () => {
    const viewer = await createUser("OWNER");
    const forged = await submit({ ...viewer, csrf: "forged" }, "/api-key");
    expect(forged.status).toBe(403);
    expect(shownKey(forged.html)).toBeUndefined();
    expect(textOf((await browse(viewer, "/api-key")).html)).toContain("You have no API key.");
  });
});

describe("users page", () => {
  const usersOf = async (root: Session) =>
    (await call<Envelope<User[]>>("GET", "/api/users", { headers: asSession(root) })).body.data;

  it("lists users and adds one with a flash", async () => {
    const root = await rootSession();
    const page = await browse(root, "/users");
    expect(page.status).toBe(200);
    expect(textOf(page.html)).toContain("root@example.test");
    const email = uniqueEmail("added");
    const res = await submit(root, "/users", {
      name: "Added",
      email,
      password: "a-long-password-1",
      role: "STAFF",
    });
    expect(res.location).toBe("/users");
    const after = await follow(root, res);
    expect(flashOf(after.html)).toBe("User added");
    expect(textOf(after.html)).toContain(email);
    expect((await usersOf(root)).find((u) => u.email === email)).toMatchObject({
      name: "Added",
      role: "STAFF",
    });
  });

  it("puts a bad or duplicate e-mail and a short password next to their fields, adding nobody", async () => {
    const root = await rootSession();
    const existing = await createUser("OWNER", root);
    const before = await count("users");
    const bad = await submit(root, "/users", {
      name: "X",
      email: "not-an-email",
      password: "short",
      role: "OWNER",
    });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.html, "email")).toMatch(/email/i);
    expect(fieldError(bad.html, "password")).toMatch(/characters/);
    expect(bad.html).toContain('value="not-an-email"');
    expect(bad.html).not.toContain('value="short"');

    const duplicate = await submit(root, "/users", {
      name: "Twin",
      email: existing.email,
      password: "a-long-password-1",
      role: "OWNER",
    });
    expect(duplicate.status).toBe(409);
    expect(fieldError(duplicate.html, "email")).toBe("A user with this e-mail already exists");
    expect(await count("users")).toBe(before);
  });

  it("changes a role and deletes a user; refuses an unknown role and the last SUPERADMIN's demotion", async () => {
    const root = await rootSession();
    const staff = await createUser("STAFF", root);
    const changed = await submit(root, `/users/${staff.userId}/role`, { role: "OWNER" });
    expect(flashOf((await follow(root, changed)).html)).toBe("Role changed");
    expect((await usersOf(root)).find((u) => u.id === staff.userId)?.role).toBe("OWNER");

    const bogus = await submit(root, `/users/${staff.userId}/role`, { role: "KING" });
    expect(bogus.status).toBe(400);
    const alert = bogus.html.match(/<p class="alert" role="alert">([\s\S]*?)<\/p>/)?.[1] ?? "";
    expect(alert).toMatch(/^role: Invalid option/);
    expect((await usersOf(root)).find((u) => u.id === staff.userId)?.role).toBe("OWNER");

    const lastAdmin = await submit(root, `/users/${root.userId}/role`, { role: "OWNER" });
    expect(lastAdmin.status).toBe(409);
    expect(lastAdmin.html).toContain("The last SUPERADMIN cannot be deleted or demoted");
    expect((await usersOf(root)).find((u) => u.id === root.userId)?.role).toBe("SUPERADMIN");

    const deleted = await submit(root, `/users/${staff.userId}/delete`);
    expect(flashOf((await follow(root, deleted)).html)).toBe("User deleted");
    expect((await usersOf(root)).some((u) => u.id === staff.userId)).toBe(false);
  });

  it("shows the API's 403 to an OWNER and lets them change nothing", async () => {
    const viewer = await createUser("OWNER");
    const page = await browse(viewer, "/users");
    expect(page.status).toBe(403);
    expect(textOf(page.html)).toContain("Not allowed");
    const before = await count("users");
    const add = await submit(viewer, "/users", {
      name: "Sneaky",
      email: uniqueEmail("sneaky"),
      password: "a-long-password-1",
      role: "SUPERADMIN",
    });
    expect(add.status).toBe(403);
    expect(await count("users")).toBe(before);
    expect(page.html).not.toContain('href="/users"');
  });
});
