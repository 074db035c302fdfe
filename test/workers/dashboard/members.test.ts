// The Members tab and the invite page in workerd, through the dashboard URLs: an owner creates a link
// (shown once), a second person signs in, joins and comments; a viewer sees no forms that would
// change anything and the API refuses them anyway; role change, removal, leaving and revoking.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { asSession, call, createUser, type Session } from "../helpers";
import { browse, fieldError, submit, textOf } from "./helpers";

let owner: Session;
let companyId: string;
let issueId: string;

beforeAll(async () => {
  owner = await createUser("OWNER");
  const company = await call<{ id: string }>("POST", "/api/companies", {
    headers: asSession(owner),
    body: { name: `Members Co ${crypto.randomUUID().slice(0, 6)}` },
  });
  companyId = company.body.id;
  const issue = await call<{ id: string }>("POST", `/api/companies/${companyId}/issues`, {
    headers: asSession(owner),
    body: { title: "Welcome the newcomer" },
  });
  issueId = issue.body.id;
});

/** Creates an invite link through the Members page form; returns the link the page shows once. */
async function inviteLink(role: "owner" | "member" | "viewer"): Promise<string> {
  const page = await submit(owner, `/companies/${companyId}/member-invites`, { role, expiresInHours: "24" });
  expect(page.status, textOf(page.html)).toBe(201);
  const link = page.html.match(/value="(http[^"]+\/invites\/swm_[0-9A-Za-z]+)"/)?.[1];
  expect(link).toBeDefined();
  return link ?? "";
}

/** Joins through the invite page as `person`: the page, then its Join button. */
async function join(person: Session, link: string) {
  const path = new URL(link).pathname;
  const page = await browse(person, path);
  expect(page.status).toBe(200);
  expect(textOf(page.html)).toContain("Join Members Co");
  return submit(person, path);
}

const roleIn = async (userId: string) =>
  (
    await env.DB.prepare("SELECT role FROM company_memberships WHERE company_id = ? AND user_id = ?")
      .bind(companyId, userId)
      .first<{ role: string }>()
  )?.role ?? null;

describe("invite links", () => {
  it("a second person invited by link signs in, joins, sees the company and comments", async () => {
    const link = await inviteLink("member");
    const path = new URL(link).pathname;
    const listed = await browse(owner, `/companies/${companyId}/members`);
    expect(listed.html).not.toContain(link);
    expect(textOf(listed.html)).toContain("pending");

    const anonymous = await browse(null, path);
    expect(anonymous.status).toBe(302);
    // Signed out, the invite offers to create an account (invite-signup.test.ts), with a way to sign in.
    expect(anonymous.location).toBe(`${path}/signup`);

    const newcomer = await createUser("OWNER");
    const joined = await join(newcomer, link);
    expect(joined.status).toBe(303);
    expect(joined.location).toBe(`/companies/${companyId}`);
    expect(await roleIn(newcomer.userId)).toBe("member");
    const overview = await browse(newcomer, `/companies/${companyId}`);
    expect(overview.status).toBe(200);
    expect(textOf(overview.html)).toContain("You member joined");

    const issuePage = await browse(newcomer, `/issues/${issueId}`);
    expect(issuePage.html).toContain('aria-label="Comment"');
    const commented = await submit(newcomer, `/issues/${issueId}/comments`, { body: "Glad to be here" });
    expect(commented.status).toBe(303);
    expect(textOf((await browse(newcomer, `/issues/${issueId}`)).html)).toContain("Glad to be here");

    const reused = await submit(await createUser("OWNER"), path);
    expect(reused.status).toBe(409);
    expect(textOf(reused.html)).toContain("already used");
  });

  it("a revoked link says so and joins nobody", async () => {
    const link = await inviteLink("member");
    const page = await browse(owner, `/companies/${companyId}/members`);
    const revoke = page.html.match(/action="(\/companies\/[^"]+\/member-invites\/[^"]+\/revoke)"/)?.[1];
    expect(revoke).toBeDefined();
    expect((await submit(owner, revoke ?? "")).status).toBe(303);
    const person = await createUser("OWNER");
    const shown = await browse(person, new URL(link).pathname);
    expect(textOf(shown.html)).toContain("This invite link was revoked");
    expect(shown.html).not.toContain('aria-label="Join the company"');
    expect(await roleIn(person.userId)).toBeNull();
  });
});

describe("a viewer", () => {
  it("sees no forms that change anything, and a forged form is refused by the API", async () => {
    const viewer = await createUser("OWNER");
    expect((await join(viewer, await inviteLink("viewer"))).status).toBe(303);

    const issuePage = await browse(viewer, `/issues/${issueId}`);
    expect(issuePage.status).toBe(200);
    expect(issuePage.html).not.toContain('aria-label="Comment"');
    expect(issuePage.html).not.toContain('aria-label="Change status"');
    expect(textOf(issuePage.html)).toContain("You are a viewer of this company");
    const board = await browse(viewer, `/companies/${companyId}/issues`);
    expect(board.status).toBe(200);
    expect(board.html).not.toContain('aria-label="New issue"');
    const members = await browse(viewer, `/companies/${companyId}/members`);
    expect(members.html).not.toContain("Change role");
    expect(members.html).not.toContain('aria-label="New invite link"');
    expect(members.html).toContain("Leave company");

    const forged = await submit(viewer, `/issues/${issueId}/comments`, { body: "sneaky" });
    expect(forged.status).toBe(403);
    const created = await submit(viewer, `/companies/${companyId}/issues`, {
      title: "sneaky",
      priority: "low",
    });
    expect(created.status).toBe(403);
    const comments = await call<Array<{ body: string }>>("GET", `/api/issues/${issueId}/comments`, {
      headers: asSession(owner),
    });
    expect(comments.body.map((comment) => comment.body)).not.toContain("sneaky");
  });

  it("leaves through the Members page and no longer sees the company", async () => {
    const viewer = await createUser("OWNER");
    expect((await join(viewer, await inviteLink("viewer"))).status).toBe(303);
    const left = await submit(viewer, `/companies/${companyId}/members/${viewer.userId}/remove`);
    expect(left.status).toBe(303);
    expect(left.location).toBe("/companies");
    expect((await browse(viewer, `/companies/${companyId}`)).status).toBe(404);
  });
});

describe("an owner on the Members page", () => {
  it("changes a role and removes a member; the last owner cannot leave", async () => {
    const person = await createUser("OWNER");
    expect((await join(person, await inviteLink("member"))).status).toBe(303);
    const page = await browse(owner, `/companies/${companyId}/members`);
    expect(textOf(page.html)).toContain(person.email);

    const changed = await submit(owner, `/companies/${companyId}/members/${person.userId}/role`, {
      role: "viewer",
    });
    expect(changed.status).toBe(303);
    expect(await roleIn(person.userId)).toBe("viewer");
    const removed = await submit(owner, `/companies/${companyId}/members/${person.userId}/remove`);
    expect(removed.status).toBe(303);
    expect(await roleIn(person.userId)).toBeNull();

    const leave = await submit(owner, `/companies/${companyId}/members/${owner.userId}/remove`);
    expect(leave.status).toBe(409);
    expect(fieldError(leave.html, `remove-${owner.userId}`)).toContain("keeps at least one owner");
    expect(await roleIn(owner.userId)).toBe("owner");
  });

  it("removes a member with their agent keys revoked, or kept and re-owned when the owner chooses (issue 25 M-d)", async () => {
    const agent = await call<{ id: string }>("POST", `/api/companies/${companyId}/agents`, {
      headers: asSession(owner),
      body: { name: `Keyed ${crypto.randomUUID().slice(0, 6)}`, role: "engineer", adapterType: "process" },
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    const keyOf = async (person: Session) => {
      const res = await call<{ id: string }>("POST", `/api/agents/${agent.body.id}/keys`, {
        headers: asSession(person),
        body: {},
      });
      expect(res.status).toBe(201);
      return res.body.id;
    };
    const keyState = async (keyId: string) =>
      (await env.DB.prepare("SELECT revoked_at, created_by_user_id FROM agent_api_keys WHERE id = ?")
        .bind(keyId)
        .first<{ revoked_at: number | null; created_by_user_id: string }>()) ?? null;

    const first = await createUser("OWNER");
    expect((await join(first, await inviteLink("member"))).status).toBe(303);
    const firstKey = await keyOf(first);
    const page = await browse(owner, `/companies/${companyId}/members`);
    expect(textOf(page.html)).toContain(", keep their agent keys");
    expect((await submit(owner, `/companies/${companyId}/members/${first.userId}/remove`)).status).toBe(303);
    expect((await keyState(firstKey))?.revoked_at).not.toBeNull();

    const second = await createUser("OWNER");
    expect((await join(second, await inviteLink("member"))).status).toBe(303);
    const secondKey = await keyOf(second);
    const kept = await submit(owner, `/companies/${companyId}/members/${second.userId}/remove`, {
      agentKeys: "transfer",
    });
    expect(kept.status).toBe(303);
    expect(await roleIn(second.userId)).toBeNull();
    expect(await keyState(secondKey)).toEqual({ revoked_at: null, created_by_user_id: owner.userId });
  });
});

const inviteCount = async () =>
  (
    await env.DB.prepare("SELECT count(*) AS n FROM member_invites WHERE company_id = ?")
      .bind(companyId)
      .first<{ n: number }>()
  )?.n ?? 0;

describe("bad input on the Members page", () => {
  it("an invite link valid for 0 hours or for an unknown role: the API's 400 next to the field, no link", async () => {
    const before = await inviteCount();
    const zero = await submit(owner, `/companies/${companyId}/member-invites`, {
      role: "member",
      expiresInHours: "0",
    });
    expect(zero.status).toBe(400);
    expect(fieldError(zero.html, "expiresInHours")).toMatch(/>=\s*1|at least 1|too small/i);
    expect(zero.html).toMatch(/id="field-expiresInHours"[^>]*aria-invalid="true"/);
    expect(zero.html).not.toMatch(/\/invites\/swm_/);

    const role = await submit(owner, `/companies/${companyId}/member-invites`, {
      role: "admin",
      expiresInHours: "24",
    });
    expect(role.status).toBe(400);
    expect(fieldError(role.html, "role")).toMatch(/owner|member|viewer|invalid/i);
    expect(fieldError(role.html, "expiresInHours")).toBeNull();
    expect(await inviteCount()).toBe(before);
  });

  it("demoting the last owner: the API's 409 next to that person's role, the role unchanged", async () => {
    const demoted = await submit(owner, `/companies/${companyId}/members/${owner.userId}/role`, {
      role: "member",
    });
    expect(demoted.status).toBe(409);
    const name = `role-${owner.userId}`;
    expect(fieldError(demoted.html, name)).toContain("keeps at least one owner");
    expect(demoted.html).toMatch(new RegExp(`id="field-${name}"[^>]*aria-invalid="true"`));
    expect(demoted.html).not.toContain('role="alert"');
    expect(await roleIn(owner.userId)).toBe("owner");

    const person = await createUser("OWNER");
    expect((await join(person, await inviteLink("member"))).status).toBe(303);
    const unknown = await submit(owner, `/companies/${companyId}/members/${person.userId}/role`, {
      role: "superuser",
    });
    expect(unknown.status).toBe(400);
    expect(fieldError(unknown.html, `role-${person.userId}`)).not.toBeNull();
    expect(fieldError(unknown.html, `role-${owner.userId}`)).toBeNull();
    expect(await roleIn(person.userId)).toBe("member");
  });
});
