// Sign-up by invite: an owner (not SUPERADMIN) binds an invite to an e-mail with a note; someone with
// no account opens it signed out, creates the account and joins in one step.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { asKey, call, createUser, generateKey, login, uniqueEmail } from "../../helpers";
import { activityOf, boardUser, type SeededCompany, seedCompany } from "../helpers";
import { roleOf } from "./fixtures";

type Invite = { id: string; token: string; email: string | null; note: string | null; state: string };
type Signup = {
  companyId: string;
  role: string;
  user: { id: string; email: string; role: string };
  csrfToken: string;
  error?: string;
  details?: { state?: string; reason?: string };
};

const invitesOf = (companyId: string) => `/api/companies/${companyId}/member-invites`;
const signupPath = (token: string) => `/api/member-invites/${token}/signup`;
const signUp = (token: string, body: unknown) => call<Signup>("POST", signupPath(token), { body });

/** A company owned by a STAFF account: instance-wide nobody special. */
async function staffTeam(): Promise<{ owner: { headers: Record<string, string> }; company: SeededCompany }> {
  const session = await createUser("STAFF");
  const owner = { userId: session.userId, key: await generateKey(session), headers: {} };
  owner.headers = asKey(owner.key);
  return { owner, company: await seedCompany(owner) };
}

async function invite(companyId: string, headers: Record<string, string>, body: Record<string, unknown>) {
  const res = await call<Invite>("POST", invitesOf(companyId), {
    headers,
    body: { role: "member", ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const usersWithEmail = async (email: string) =>
  (
    await env.DB.prepare("SELECT id, role, name FROM users WHERE email = ?")
      .bind(email)
      .all<{ id: string; role: string; name: string }>()
  ).results;

const inviteRow = (id: string) =>
  env.DB.prepare("SELECT email, note, used_at, used_by_user_id FROM member_invites WHERE id = ?")
    .bind(id)
    .first<{ email: string | null; note: string | null; used_at: number | null; used_by_user_id: string }>();

describe("invites bound to an e-mail, with a note", () => {
  it("a STAFF owner creates one; the e-mail is stored lower-cased; the list shows e-mail, note and state", async () => {
    const { owner, company } = await staffTeam();
    const email = uniqueEmail("Dana").replace("dana", "Dana");
    const created = await invite(company.id, owner.headers, { email, note: "  Design contractor  " });
    expect(created).toMatchObject({
      email: email.toLowerCase(),
      note: "Design contractor",
      state: "pending",
    });
    expect(await inviteRow(created.id)).toMatchObject({
      email: email.toLowerCase(),
      note: "Design contractor",
    });
    const list = await call<{ invites: Invite[] }>("GET", invitesOf(company.id), { headers: owner.headers });
    expect(list.body.invites).toMatchObject([
      { id: created.id, email: email.toLowerCase(), note: "Design contractor", state: "pending" },
    ]);
  });

  it("refuses a malformed e-mail, an empty or over-long note (400) and stores nothing", async () => {
    const { owner, company } = await staffTeam();
    for (const body of [
      { email: "not-an-email" },
      { email: "" },
      { note: "   " },
      { note: "x".repeat(501) },
      { note: 5 },
    ]) {
      const res = await call("POST", invitesOf(company.id), {
        headers: owner.headers,
        body: { role: "member", ...body },
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const count = await env.DB.prepare("SELECT COUNT(*) AS n FROM member_invites WHERE company_id = ?")
      .bind(company.id)
      .first<{ n: number }>();
    expect(count?.n).toBe(0);
  });

  it("only its own account may accept it signed in (403 for another), and then joins", async () => {
    const { owner, company } = await staffTeam();
    const invitee = await createUser("STAFF");
    const created = await invite(company.id, owner.headers, { email: invitee.email.toUpperCase() });
    const other = await boardUser();
    const refused = await call<{ error: string }>("POST", `/api/member-invites/${created.token}/accept`, {
      headers: other.headers,
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toContain(invitee.email);
    expect(await roleOf(company.id, other.userId)).toBeNull();
    const key = await generateKey(invitee);
    const joined = await call("POST", `/api/member-invites/${created.token}/accept`, { headers: asKey(key) });
    expect(joined.status).toBe(200);
    expect(await roleOf(company.id, invitee.userId)).toBe("member");
  });
});

describe("POST /member-invites/:token/signup (signed out)", () => {
  it("shows the invite without credentials, then creates a STAFF account that joins, signed in at once", async () => {
    const { owner, company } = await staffTeam();
    const email = uniqueEmail("newcomer");
    const created = await invite(company.id, owner.headers, { role: "viewer", email, note: "Our auditor" });
    const preview = await call<{ email: string; note: string; role: string; state: string }>(
      "GET",
      signupPath(created.token),
    );
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ email, note: "Our auditor", role: "viewer", state: "pending" });

    const res = await signUp(created.token, { name: "New Comer", password: "correct horse" });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ companyId: company.id, role: "viewer", user: { email, role: "STAFF" } });
    const [user] = await usersWithEmail(email);
    expect(user).toMatchObject({ id: res.body.user.id, role: "STAFF", name: "New Comer" });
    expect(await roleOf(company.id, res.body.user.id)).toBe("viewer");
    expect(await inviteRow(created.id)).toMatchObject({ used_by_user_id: res.body.user.id });
    expect(await activityOf(res.body.user.id)).toMatchObject([
      { action: "member.joined", actor_type: "user", actor_id: res.body.user.id },
    ]);

    const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    expect(cookie).toMatch(/^web-auth\.session-token=/);
    const seen = await call<{ name: string }>("GET", `/api/companies/${company.id}`, { headers: { cookie } });
    expect(seen.status).toBe(200);
    expect(seen.body.name).toBe(company.name);
    // The password works from now on, as for any account.
    expect((await login(email, "correct horse")).userId).toBe(res.body.user.id);
  });

  it("refuses a short password or another e-mail (400) and creates nothing; the invite stays pending", async () => {
    const { owner, company } = await staffTeam();
    const email = uniqueEmail("careful");
    const created = await invite(company.id, owner.headers, { email });
    for (const body of [
      { name: "Short", password: "1234567" },
      { name: "", password: "long enough" },
      { name: "Other", password: "long enough", email: uniqueEmail("other") },
      { name: "Extra", password: "long enough", role: "SUPERADMIN" },
    ]) {
      const res = await signUp(created.token, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect(await usersWithEmail(email)).toEqual([]);
    expect((await inviteRow(created.id))?.used_at).toBeNull();
  });

  it("tells an already registered e-mail to sign in (409) and leaves the invite for them to accept", async () => {
    const { owner, company } = await staffTeam();
    const existing = await createUser("STAFF");
    const created = await invite(company.id, owner.headers, { email: existing.email });
    const res = await signUp(created.token, { name: "Impostor", password: "long enough" });
    expect(res.status).toBe(409);
    expect(res.body.details?.reason).toBe("account_exists");
    expect(res.body.error).toContain("sign in");
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(await usersWithEmail(existing.email)).toHaveLength(1);
    expect((await inviteRow(created.id))?.used_at).toBeNull();
    const key = await generateKey(existing);
    expect(
      (await call("POST", `/api/member-invites/${created.token}/accept`, { headers: asKey(key) })).status,
    ).toBe(200);
  });

  it("an invite with no e-mail creates no account (403): it is for someone who signs in", async () => {
    const { owner, company } = await staffTeam();
    const created = await invite(company.id, owner.headers, {});
    const res = await signUp(created.token, {
      name: "Anyone",
      password: "long enough",
      email: uniqueEmail(),
    });
    expect(res.status).toBe(403);
    expect(res.body.error).toContain("sign in");
    expect((await inviteRow(created.id))?.used_at).toBeNull();
  });

  it("answers 404 to an unknown link, 410 to an expired or revoked one and 409 to a used one", async () => {
    const { owner, company } = await staffTeam();
    const body = { name: "Late", password: "long enough" };
    expect((await signUp(`swm_${"x".repeat(43)}`, body)).status).toBe(404);
    expect((await call("GET", signupPath(`swm_${"x".repeat(43)}`))).status).toBe(404);
    const expired = await invite(company.id, owner.headers, { email: uniqueEmail() });
    await env.DB.prepare("UPDATE member_invites SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, expired.id)
      .run();
    const revoked = await invite(company.id, owner.headers, { email: uniqueEmail() });
    expect(
      (await call("DELETE", `${invitesOf(company.id)}/${revoked.id}`, { headers: owner.headers })).status,
    ).toBe(200);
    const used = await invite(company.id, owner.headers, { email: uniqueEmail() });
    expect((await signUp(used.token, body)).status).toBe(201);
    for (const [created, status, state] of [
      [expired, 410, "expired"],
      [revoked, 410, "revoked"],
      [used, 409, "used"],
    ] as const) {
      const res = await signUp(created.token, body);
      expect(res.status, state).toBe(status);
      expect(res.body.details?.state).toBe(state);
      const preview = await call<{ state: string }>("GET", signupPath(created.token));
      expect(preview.body.state).toBe(state);
    }
    expect(await usersWithEmail(expired.email ?? "")).toEqual([]);
    expect(await usersWithEmail(revoked.email ?? "")).toEqual([]);
  });

  it("is single use: of two sign-ups at once exactly one account is made and joins", async () => {
    const { owner, company } = await staffTeam();
    const email = uniqueEmail("racer");
    const created = await invite(company.id, owner.headers, { email });
    const answers = await Promise.all([
      signUp(created.token, { name: "First", password: "long enough 1" }),
      signUp(created.token, { name: "Second", password: "long enough 2" }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    const accounts = await usersWithEmail(email);
    expect(accounts).toHaveLength(1);
    const members = await env.DB.prepare(
      "SELECT user_id FROM company_memberships WHERE company_id = ? AND role = 'member'",
    )
      .bind(company.id)
      .all<{ user_id: string }>();
    expect(members.results.map((m) => m.user_id)).toEqual([accounts[0]?.id]);
    const joins = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM activity_log WHERE company_id = ? AND action = 'member.joined'",
    )
      .bind(company.id)
      .first<{ n: number }>();
    expect(joins?.n).toBe(1);
  });
});
