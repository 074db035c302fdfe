// Sign-up by invite through the dashboard URLs: a signed-out person opens an invite bound to their
// e-mail, creates the account (e-mail fixed by the invite, stated password policy) and lands in the
// company signed in; used, expired and unbound links say so; the Members page explains the roles.
import { SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { asSession, BASE, call, createUser, type Session, uniqueEmail } from "../helpers";
import { browse, formError, submit, textOf } from "./helpers";

let owner: Session;
let companyId: string;

beforeAll(async () => {
  owner = await createUser("STAFF");
  const company = await call<{ id: string }>("POST", "/api/companies", {
    headers: asSession(owner),
    body: { name: `Signup Co ${crypto.randomUUID().slice(0, 6)}` },
  });
  companyId = company.body.id;
});

/** An invite made on the Members page form; returns the link's path (shown once). */
async function invitePath(fields: Record<string, string>): Promise<string> {
  const page = await submit(owner, `/companies/${companyId}/member-invites`, {
    role: "member",
    expiresInHours: "24",
    ...fields,
  });
  expect(page.status, textOf(page.html)).toBe(201);
  const link = page.html.match(/value="(http[^"]+\/invites\/swm_[0-9A-Za-z]+)"/)?.[1];
  expect(link).toBeDefined();
  return new URL(link ?? "").pathname;
}

/** The sign-up page signed out: its HTML and the double-submit cookie its form needs. */
async function openSignedOut(path: string) {
  const first = await browse(null, path);
  expect(first.status).toBe(302);
  expect(first.location).toBe(`${path}/signup`);
  const response = await SELF.fetch(`${BASE}${path}/signup`, { redirect: "manual" });
  const cookie = (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const html = await response.text();
  const csrf = html.match(/name="_csrf" value="([^"]+)"/)?.[1] ?? "";
  return { status: response.status, html, cookie, csrf };
}

const signUp = (path: string, page: { cookie: string; csrf: string }, fields: Record<string, string>) =>
  submit(null, `${path}/signup`, { _csrf: page.csrf, ...fields }, { cookie: page.cookie });

describe("sign-up by invite (dashboard)", () => {
  it("a new person creates the account from an e-mailed link and lands in the company, signed in", async () => {
    const email = uniqueEmail("newcomer");
    const path = await invitePath({ email, note: "Joins the support rota" });
    const members = textOf((await browse(owner, `/companies/${companyId}/members`)).html);
    expect(members).toContain(email);
    expect(members).toContain("Joins the support rota");

    const page = await openSignedOut(path);
    expect(page.status).toBe(200);
    const text = textOf(page.html);
    expect(text).toContain("Create your account");
    expect(text).toContain("At least 8 characters");
    expect(text).toContain("Joins the support rota");
    expect(page.html).toMatch(new RegExp(`value="${email}"[^>]*readonly`));

    const short = await signUp(path, page, { name: "Nia", password: "short" });
    expect(short.status).toBe(400);
    expect(textOf(short.html)).toContain("Create your account");

    const done = await signUp(path, page, { name: "Nia Newcomer", password: "a long passphrase" });
    expect(done.status, textOf(done.html)).toBe(303);
    expect(done.location).toBe(`/companies/${companyId}`);
    const session = done.headers
      .getAll("set-cookie")
      .map((cookie) => cookie.split(";")[0] ?? "")
      .find((cookie) => cookie.startsWith("web-auth.session-token="));
    expect(session).toBeDefined();
    const landed = await browse({ cookie: session ?? "", csrf: "", userId: "" }, `/companies/${companyId}`);
    expect(landed.status).toBe(200);
    expect(textOf(landed.html)).toContain("Nia Newcomer");
    const row = await env.DB.prepare("SELECT role FROM users WHERE email = ?")
      .bind(email)
      .first<{ role: string }>();
    expect(row?.role).toBe("STAFF");

    const again = await openSignedOut(path);
    expect(again.status).toBe(409);
    expect(textOf(again.html)).toContain("already used");
  });

  it("an existing account is told to sign in; an unbound or expired link says what it is", async () => {
    const existing = await createUser("STAFF");
    const bound = await invitePath({ email: existing.email });
    const page = await openSignedOut(bound);
    const refused = await signUp(bound, page, { name: "Someone", password: "a long passphrase" });
    expect(refused.status).toBe(409);
    expect(formError(refused.html)).toContain("sign in");
    expect(refused.html).toContain(`/login?next=${encodeURIComponent(bound)}`);

    const unbound = await openSignedOut(await invitePath({}));
    expect(unbound.status).toBe(200);
    expect(textOf(unbound.html)).toContain("for someone who already has an account");
    expect(unbound.html).not.toContain('name="password"');

    const expiring = await invitePath({ email: uniqueEmail() });
    await env.DB.prepare("UPDATE member_invites SET expires_at = ? WHERE company_id = ? AND expires_at > ?")
      .bind(Date.now() - 1, companyId, Date.now())
      .run();
    const expired = await openSignedOut(expiring);
    expect(expired.status).toBe(410);
    expect(textOf(expired.html)).toContain("has expired");
  });

  it("a forged form (no matching cookie) creates nothing", async () => {
    const email = uniqueEmail("forged");
    const path = await invitePath({ email });
    const forged = await submit(null, `${path}/signup`, {
      _csrf: "x",
      name: "Forger",
      password: "a long passphrase",
    });
    expect(forged.status).toBe(403);
    const row = await env.DB.prepare("SELECT id FROM users WHERE email = ?").bind(email).first();
    expect(row).toBeNull();
  });

  it("the Members page tells account roles from company roles", async () => {
    const text = textOf((await browse(owner, `/companies/${companyId}/members`)).html);
    expect(text).toContain("Account roles and company roles");
    expect(text).toContain("SUPERADMIN");
    expect(text).toContain("STAFF");
  });
});
