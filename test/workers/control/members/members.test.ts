// Company members: listing, role changes, removal and leaving, the last owner, and removal taking
// effect at once.
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { activityOf, boardUser, seedCompany, seedIssue } from "../helpers";
import { joinAs, roleOf, seedTeam } from "./fixtures";

type Member = { userId: string; name: string; email: string; role: string; joinedAt: string };

const membersOf = (companyId: string) => `/api/companies/${companyId}/members`;

describe("GET /companies/:companyId/members", () => {
  it("lists owners, members then viewers with name, email, role and joinedAt", async () => {
    const { owner, company, member, viewer } = await seedTeam();
    const res = await call<{ members: Member[] }>("GET", membersOf(company.id), { headers: viewer.headers });
    expect(res.status).toBe(200);
    expect(res.body.members.map((m) => [m.userId, m.role])).toEqual([
      [owner.userId, "owner"],
      [member.userId, "member"],
      [viewer.userId, "viewer"],
    ]);
    expect(res.body.members[0]?.email).toMatch(/@example\.test$/);
    expect(Date.parse(res.body.members[0]?.joinedAt ?? "")).not.toBeNaN();
  });

  it("answers 404 to someone of another company, and /me gives the caller's own role", async () => {
    const { company, viewer } = await seedTeam();
    const stranger = await boardUser();
    await seedCompany(stranger);
    expect((await call("GET", membersOf(company.id), { headers: stranger.headers })).status).toBe(404);
    const me = await call<Member>("GET", `${membersOf(company.id)}/me`, { headers: viewer.headers });
    expect(me.body).toMatchObject({ userId: viewer.userId, role: "viewer" });
  });
});

describe("PATCH /companies/:companyId/members/:userId", () => {
  it("lets an owner change a role, which holds for the member's very next write", async () => {
    const { owner, company, member } = await seedTeam();
    const issue = await seedIssue(company);
    const comment = () =>
      call("POST", `/api/issues/${issue.id}/comments`, { headers: member.headers, body: { body: "hi" } });
    expect((await comment()).status).toBe(201);
    const res = await call<Member>("PATCH", `${membersOf(company.id)}/${member.userId}`, {
      headers: owner.headers,
      body: { role: "viewer" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ userId: member.userId, role: "viewer" });
    expect(await roleOf(company.id, member.userId)).toBe("viewer");
    expect((await comment()).status).toBe(403);
    expect((await activityOf(member.userId)).map((e) => e.action)).toContain("member.role_changed");
  });

  it("refuses to demote the last owner (409) and changes nothing", async () => {
    const { owner, company } = await seedTeam();
    const res = await call("PATCH", `${membersOf(company.id)}/${owner.userId}`, {
      headers: owner.headers,
      body: { role: "member" },
    });
    expect(res.status).toBe(409);
    expect(await roleOf(company.id, owner.userId)).toBe("owner");
    expect(await activityOf(owner.userId)).toEqual([]);
  });

  it("of two owners demoting each other at once, exactly one succeeds", async () => {
    const { owner, company } = await seedTeam();
    const second = await joinAs(company, "owner");
    const [a, b] = await Promise.all([
      call("PATCH", `${membersOf(company.id)}/${second.userId}`, {
        headers: owner.headers,
        body: { role: "member" },
      }),
      call("PATCH", `${membersOf(company.id)}/${owner.userId}`, {
        headers: second.headers,
        body: { role: "member" },
      }),
    ]);
    // The loser is refused either by the last-owner guard (409) or, when it runs after the winner's
    // change, because it is no longer an owner (403); never do both succeed.
    expect([a.status, b.status].filter((status) => status === 200)).toHaveLength(1);
    expect([a.status, b.status].filter((status) => status === 409 || status === 403)).toHaveLength(1);
    const roles = [await roleOf(company.id, owner.userId), await roleOf(company.id, second.userId)];
    expect(roles.filter((role) => role === "owner")).toHaveLength(1);
  });

  it("rejects an unknown role (400) and an unknown member (404)", async () => {
    const { owner, company, member } = await seedTeam();
    const path = `${membersOf(company.id)}/${member.userId}`;
    expect((await call("PATCH", path, { headers: owner.headers, body: { role: "admin" } })).status).toBe(400);
    const unknown = `${membersOf(company.id)}/${crypto.randomUUID()}`;
    expect((await call("PATCH", unknown, { headers: owner.headers, body: { role: "member" } })).status).toBe(
      404,
    );
    expect(await roleOf(company.id, member.userId)).toBe("member");
  });
});

describe("DELETE /companies/:companyId/members/:userId", () => {
  it("an owner removes a member, who is locked out at once, reads and writes alike", async () => {
    const { owner, company, member } = await seedTeam();
    const issue = await seedIssue(company);
    // Seen a moment ago: this isolate remembers the membership for reads.
    expect((await call("GET", `/api/issues/${issue.id}`, { headers: member.headers })).status).toBe(200);
    const res = await call("DELETE", `${membersOf(company.id)}/${member.userId}`, { headers: owner.headers });
    expect(res.status).toBe(204);
    expect(await roleOf(company.id, member.userId)).toBeNull();
    expect((await call("GET", `/api/issues/${issue.id}`, { headers: member.headers })).status).toBe(404);
    expect((await call("GET", `/api/companies/${company.id}`, { headers: member.headers })).status).toBe(404);
    const write = await call("POST", `/api/issues/${issue.id}/comments`, {
      headers: member.headers,
      body: { body: "still here?" },
    });
    expect(write.status).toBe(404);
    expect(await activityOf(member.userId)).toMatchObject([
      { action: "member.removed", actor_type: "user", actor_id: owner.userId },
    ]);
  });

  it("a member leaves; a member cannot remove someone else (403)", async () => {
    const { company, member, viewer } = await seedTeam();
    const other = await call("DELETE", `${membersOf(company.id)}/${viewer.userId}`, {
      headers: member.headers,
    });
    expect(other.status).toBe(403);
    expect(await roleOf(company.id, viewer.userId)).toBe("viewer");
    const left = await call("DELETE", `${membersOf(company.id)}/${member.userId}`, {
      headers: member.headers,
    });
    expect(left.status).toBe(204);
    expect(await activityOf(member.userId)).toMatchObject([
      { action: "member.left", actor_id: member.userId },
    ]);
  });

  it("the last owner can neither leave nor be removed (409); with a second owner they can", async () => {
    const { owner, company } = await seedTeam();
    const path = `${membersOf(company.id)}/${owner.userId}`;
    const refused = await call<{ code: string }>("DELETE", path, { headers: owner.headers });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("conflict");
    expect(await roleOf(company.id, owner.userId)).toBe("owner");
    await joinAs(company, "owner");
    expect((await call("DELETE", path, { headers: owner.headers })).status).toBe(204);
  });

  it("of two owners leaving at once, exactly one leaves", async () => {
    const { owner, company } = await seedTeam();
    const second = await joinAs(company, "owner");
    const [a, b] = await Promise.all([
      call("DELETE", `${membersOf(company.id)}/${owner.userId}`, { headers: owner.headers }),
      call("DELETE", `${membersOf(company.id)}/${second.userId}`, { headers: second.headers }),
    ]);
    expect([a.status, b.status].sort()).toEqual([204, 409]);
    const left = [await roleOf(company.id, owner.userId), await roleOf(company.id, second.userId)];
    expect(left.filter((role) => role === "owner")).toHaveLength(1);
  });

  it("answers 404 across tenants and changes nothing", async () => {
    const { company, member } = await seedTeam();
    const stranger = await boardUser();
    await seedCompany(stranger);
    const res = await call("DELETE", `${membersOf(company.id)}/${member.userId}`, {
      headers: stranger.headers,
    });
    expect(res.status).toBe(404);
    expect(await roleOf(company.id, member.userId)).toBe("member");
  });
});
