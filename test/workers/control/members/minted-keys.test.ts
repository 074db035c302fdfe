// Agent keys a member minted end with the membership (issue 25 M-d): revoked by default, or re-owned
// by the owner who removes them; the key list names who minted each key.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { asSession, call, rootSession } from "../../helpers";
import { type BoardUser, seedAgent } from "../helpers";
import { seedTeam } from "./fixtures";

type Author = { type: "user" | "agent"; id: string; name: string | null; email: string | null } | null;
type Key = { id: string; name: string; revokedAt: string | null; createdBy: Author };

async function mint(agentId: string, by: Record<string, string>, name: string) {
  const res = await call<Key & { token: string }>("POST", `/api/agents/${agentId}/keys`, {
    headers: by,
    body: { name },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { ...res.body, headers: { Authorization: `Bearer ${res.body.token}` } };
}

const keysOf = async (agentId: string, by: BoardUser) => {
  const res = await call<Key[]>("GET", `/api/agents/${agentId}/keys`, { headers: by.headers });
  expect(res.status).toBe(200);
  return res.body;
};

async function removalDetails(userId: string): Promise<Record<string, unknown> | null> {
  const row = await env.DB.prepare(
    "SELECT details FROM activity_log WHERE entity_id = ? AND action IN ('member.removed', 'member.left')",
  )
    .bind(userId)
    .first<{ details: string }>();
  return row ? (JSON.parse(row.details) as Record<string, unknown>) : null;
}

const remove = (companyId: string, userId: string, by: BoardUser, query = "") =>
  call("DELETE", `/api/companies/${companyId}/members/${userId}${query}`, { headers: by.headers });

/** A write the agent's key can make: an issue in its company. */
const write = (companyId: string, headers: Record<string, string>) =>
  call("POST", `/api/companies/${companyId}/issues`, { headers, body: { title: "still here?" } });

describe("removing a member ends the agent keys they minted (issue 25 M-d)", () => {
  it("revokes them by default: the old key answers 401 at once; keys others minted keep working", async () => {
    const { owner, company, member } = await seedTeam();
    const agent = await seedAgent(company.id);
    const members = await mint(agent.id, member.headers, "member's");
    const owners = await mint(agent.id, owner.headers, "owner's");
    expect((await write(company.id, members.headers)).status).toBe(201);

    expect((await remove(company.id, member.userId, owner)).status).toBe(204);

    expect((await write(company.id, members.headers)).status).toBe(401);
    expect((await call("GET", `/api/companies/${company.id}`, { headers: members.headers })).status).toBe(
      401,
    );
    expect((await write(company.id, owners.headers)).status).toBe(201);
    const listed = await keysOf(agent.id, owner);
    expect(listed.find((key) => key.id === members.id)?.revokedAt).not.toBeNull();
    expect(listed.find((key) => key.id === owners.id)?.revokedAt).toBeNull();
    expect(await removalDetails(member.userId)).toMatchObject({
      agentKeys: { mode: "revoke", keyIds: [members.id] },
    });
  });

  it("re-owns them with ?agentKeys=transfer: they keep working and now name the removing owner", async () => {
    const { owner, company, member } = await seedTeam();
    const agent = await seedAgent(company.id);
    const members = await mint(agent.id, member.headers, "member's");

    expect((await remove(company.id, member.userId, owner, "?agentKeys=transfer")).status).toBe(204);

    expect((await write(company.id, members.headers)).status).toBe(201);
    const key = (await keysOf(agent.id, owner)).find((row) => row.id === members.id);
    expect(key?.revokedAt).toBeNull();
    expect(key?.createdBy).toMatchObject({ type: "user", id: owner.userId });
  });

  it("revokes a leaving member's keys too; only an owner removing someone else can transfer them", async () => {
    const { owner, company, member } = await seedTeam();
    const agent = await seedAgent(company.id);
    const members = await mint(agent.id, member.headers, "member's");
    const transfer = await remove(company.id, member.userId, member, "?agentKeys=transfer");
    expect(transfer.status).toBe(400);
    expect(JSON.stringify(transfer.body)).toContain("agentKeys");
    expect((await write(company.id, members.headers)).status).toBe(201);

    expect((await remove(company.id, member.userId, member)).status).toBe(204);
    expect((await write(company.id, members.headers)).status).toBe(401);
    expect((await keysOf(agent.id, owner)).find((key) => key.id === members.id)?.revokedAt).not.toBeNull();
  });

  it("revokes them when the user is deleted altogether", async () => {
    const { owner, company, member } = await seedTeam();
    const agent = await seedAgent(company.id);
    const members = await mint(agent.id, member.headers, "member's");
    const root = await rootSession();
    expect((await call("DELETE", `/api/users/${member.userId}`, { headers: asSession(root) })).status).toBe(
      200,
    );
    expect((await write(company.id, members.headers)).status).toBe(401);
    expect((await keysOf(agent.id, owner)).find((key) => key.id === members.id)?.createdBy).toMatchObject({
      type: "user",
      id: member.userId,
      name: null,
    });
  });

  it("keeps the keys when the removal is refused: the last owner cannot leave (409)", async () => {
    const { owner, company } = await seedTeam();
    const agent = await seedAgent(company.id);
    const owners = await mint(agent.id, owner.headers, "owner's");
    expect((await remove(company.id, owner.userId, owner)).status).toBe(409);
    expect((await write(company.id, owners.headers)).status).toBe(201);
    expect((await keysOf(agent.id, owner)).find((key) => key.id === owners.id)?.revokedAt).toBeNull();
  });

  it("answers 400 naming agentKeys for an unknown choice, and removes nobody", async () => {
    const { owner, company, member } = await seedTeam();
    const res = await remove(company.id, member.userId, owner, "?agentKeys=keep");
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain("agentKeys");
    const members = await call<{ members: Array<{ userId: string }> }>(
      "GET",
      `/api/companies/${company.id}/members`,
      { headers: owner.headers },
    );
    expect(members.body.members.map((m) => m.userId)).toContain(member.userId);
  });
});

describe("the key list names each key's minter (issue 25 M-d)", () => {
  it("shows the user (id, name, e-mail) or the agent that minted a key, and null for a platform key", async () => {
    const { owner, company, member } = await seedTeam();
    const agent = await seedAgent(company.id);
    const byMember = await mint(agent.id, member.headers, "member's");
    const bySelf = await mint(agent.id, agent.headers, "its own");
    const listed = await keysOf(agent.id, owner);
    const profile = await call<{ members: Array<{ userId: string; name: string; email: string }> }>(
      "GET",
      `/api/companies/${company.id}/members`,
      { headers: owner.headers },
    );
    const memberProfile = profile.body.members.find((m) => m.userId === member.userId);
    expect(listed.find((key) => key.id === byMember.id)?.createdBy).toEqual({
      type: "user",
      id: member.userId,
      name: memberProfile?.name,
      email: memberProfile?.email,
    });
    expect(listed.find((key) => key.id === bySelf.id)?.createdBy).toEqual({
      type: "agent",
      id: agent.id,
      name: agent.name,
      email: null,
    });
    expect(listed.find((key) => key.name === "seed")?.createdBy).toBeNull();
    expect(byMember.createdBy).toMatchObject({ type: "user", id: member.userId });
  });
});
