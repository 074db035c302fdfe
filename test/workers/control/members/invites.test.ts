// Invite links for people: created by owners, shown once, single use, expiring, revocable.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../../../workers/auth/crypto";
import { BASE, call } from "../../helpers";
import { activityOf, boardUser, seedAgent, seedCompany, seedIssue } from "../helpers";
import { roleOf, seedTeam } from "./fixtures";

type Invite = { id: string; role: string; state: string; expiresAt: string; token: string; url: string };

const invitesOf = (companyId: string) => `/api/companies/${companyId}/member-invites`;
const accept = (token: string, headers: Record<string, string>) =>
  call<{ companyId: string; role: string; error?: string; details?: { state?: string } }>(
    "POST",
    `/api/member-invites/${token}/accept`,
    { headers },
  );

async function invite(
  companyId: string,
  headers: Record<string, string>,
  body: unknown = { role: "member" },
) {
  const res = await call<Invite>("POST", invitesOf(companyId), { headers, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

describe("POST /companies/:companyId/member-invites", () => {
  it("gives the owner a link shown once; only the token's hash is stored; the list never shows it", async () => {
    const { owner, company } = await seedTeam();
    const before = Date.now();
    const created = await invite(company.id, owner.headers, { role: "viewer", expiresInHours: 2 });
    expect(created.token).toMatch(/^swm_[0-9A-Za-z]{43}$/);
    expect(created.url).toBe(`${BASE}/invites/${created.token}`);
    expect(created).toMatchObject({ role: "viewer", state: "pending" });
    expect(Date.parse(created.expiresAt) - before).toBeGreaterThan(2 * 3_600_000 - 5_000);
    expect(Date.parse(created.expiresAt) - before).toBeLessThan(2 * 3_600_000 + 5_000);
    const stored = await env.DB.prepare("SELECT token_hash FROM member_invites WHERE id = ?")
      .bind(created.id)
      .first<{ token_hash: string }>();
    expect(stored?.token_hash).toBe(await sha256Hex(created.token));
    const list = await call<{ invites: Invite[] }>("GET", invitesOf(company.id), { headers: owner.headers });
    expect(list.body.invites.map((i) => i.id)).toEqual([created.id]);
    expect(JSON.stringify(list.body)).not.toContain(created.token);
    expect((await activityOf(created.id)).map((e) => e.action)).toEqual(["member_invite.created"]);
  });

  it("refuses members (403), viewers (403), agents (403), strangers (404) and bad bodies (400)", async () => {
    const { owner, company, member, viewer } = await seedTeam();
    const agent = await seedAgent(company.id, { role: "ceo" });
    const stranger = await boardUser();
    await seedCompany(stranger);
    for (const [who, headers, status] of [
      ["member", member.headers, 403],
      ["viewer", viewer.headers, 403],
      ["agent", agent.headers, 403],
      ["stranger", stranger.headers, 404],
    ] as const) {
      const res = await call("POST", invitesOf(company.id), { headers, body: { role: "member" } });
      expect(res.status, who).toBe(status);
    }
    for (const body of [
      {},
      { role: "admin" },
      { role: "member", expiresInHours: 0 },
      { role: "member", x: 1 },
    ])
      expect((await call("POST", invitesOf(company.id), { headers: owner.headers, body })).status).toBe(400);
    const count = await env.DB.prepare("SELECT COUNT(*) AS n FROM member_invites WHERE company_id = ?")
      .bind(company.id)
      .first<{ n: number }>();
    expect(count?.n).toBe(0);
  });
});

describe("POST /member-invites/:token/accept", () => {
  it("a second person joins with the invite's role, sees the company and comments", async () => {
    const { owner, company } = await seedTeam();
    const issue = await seedIssue(company);
    const created = await invite(company.id, owner.headers, { role: "member" });
    const newcomer = await boardUser();
    expect((await call("GET", `/api/companies/${company.id}`, { headers: newcomer.headers })).status).toBe(
      404,
    );
    const joined = await accept(created.token, newcomer.headers);
    expect(joined.status, JSON.stringify(joined.body)).toBe(200);
    expect(joined.body).toMatchObject({ companyId: company.id, role: "member" });
    expect(await roleOf(company.id, newcomer.userId)).toBe("member");
    expect((await call("GET", `/api/companies/${company.id}`, { headers: newcomer.headers })).status).toBe(
      200,
    );
    const comment = await call("POST", `/api/issues/${issue.id}/comments`, {
      headers: newcomer.headers,
      body: { body: "Hello from the new member" },
    });
    expect(comment.status).toBe(201);
    expect(await activityOf(newcomer.userId)).toMatchObject([
      { action: "member.joined", actor_type: "user", actor_id: newcomer.userId },
    ]);
    const list = await call<{ invites: Array<{ state: string; usedByUserId: string }> }>(
      "GET",
      invitesOf(company.id),
      { headers: owner.headers },
    );
    expect(list.body.invites[0]).toMatchObject({ state: "used", usedByUserId: newcomer.userId });
  });

  it("is single use: of two people accepting at once exactly one joins, the other gets 409", async () => {
    const { owner, company } = await seedTeam();
    const created = await invite(company.id, owner.headers);
    const [first, second] = [await boardUser(), await boardUser()];
    const answers = await Promise.all([
      accept(created.token, first.headers),
      accept(created.token, second.headers),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const roles = [await roleOf(company.id, first.userId), await roleOf(company.id, second.userId)];
    expect(roles.filter((role) => role === "member")).toHaveLength(1);
    expect(roles.filter((role) => role === null)).toHaveLength(1);
    const joins = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM activity_log WHERE company_id = ? AND action = 'member.joined'",
    )
      .bind(company.id)
      .first<{ n: number }>();
    expect(joins?.n).toBe(1);
    const third = await boardUser();
    const late = await accept(created.token, third.headers);
    expect(late.status).toBe(409);
    expect(late.body.details?.state).toBe("used");
  });

  it("answers 410 to an expired or revoked link and 404 to an unknown one; nobody joins", async () => {
    const { owner, company } = await seedTeam();
    const expired = await invite(company.id, owner.headers);
    await env.DB.prepare("UPDATE member_invites SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, expired.id)
      .run();
    const revoked = await invite(company.id, owner.headers);
    const revoke = await call<{ state: string }>("DELETE", `${invitesOf(company.id)}/${revoked.id}`, {
      headers: owner.headers,
    });
    expect(revoke.status).toBe(200);
    expect(revoke.body.state).toBe("revoked");
    const person = await boardUser();
    const late = await accept(expired.token, person.headers);
    expect(late.status).toBe(410);
    expect(late.body.details?.state).toBe("expired");
    const cancelled = await accept(revoked.token, person.headers);
    expect(cancelled.status).toBe(410);
    expect(cancelled.body.details?.state).toBe("revoked");
    expect((await accept(`swm_${"x".repeat(43)}`, person.headers)).status).toBe(404);
    expect(await roleOf(company.id, person.userId)).toBeNull();
  });

  it("tells an existing member so (409) and leaves the link usable; agents cannot accept (403)", async () => {
    const { owner, company, member } = await seedTeam();
    const created = await invite(company.id, owner.headers, { role: "owner" });
    const again = await accept(created.token, member.headers);
    expect(again.status).toBe(409);
    expect(await roleOf(company.id, member.userId)).toBe("member");
    const agent = await seedAgent(company.id);
    expect((await accept(created.token, agent.headers)).status).toBe(403);
    const person = await boardUser();
    expect((await accept(created.token, person.headers)).status).toBe(200);
    expect(await roleOf(company.id, person.userId)).toBe("owner");
  });
});

describe("DELETE /companies/:companyId/member-invites/:inviteId", () => {
  it("revokes once (idempotent), refuses a used invite (409), and is 404 from another company", async () => {
    const { owner, company } = await seedTeam();
    const created = await invite(company.id, owner.headers);
    const path = `${invitesOf(company.id)}/${created.id}`;
    const stranger = await boardUser();
    const theirs = await seedCompany(stranger);
    expect(
      (await call("DELETE", `${invitesOf(theirs.id)}/${created.id}`, { headers: stranger.headers })).status,
    ).toBe(404);
    expect((await call("DELETE", path, { headers: stranger.headers })).status).toBe(404);
    const used = await invite(company.id, owner.headers);
    expect((await accept(used.token, (await boardUser()).headers)).status).toBe(200);
    expect(
      (await call("DELETE", `${invitesOf(company.id)}/${used.id}`, { headers: owner.headers })).status,
    ).toBe(409);
    expect((await call("DELETE", path, { headers: owner.headers })).status).toBe(200);
    expect((await call("DELETE", path, { headers: owner.headers })).status).toBe(200);
    expect((await activityOf(created.id)).map((e) => e.action)).toEqual([
      "member_invite.created",
      "member_invite.revoked",
    ]);
  });
});
