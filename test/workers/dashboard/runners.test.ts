// The runners page in workerd: your runners, register (the token shown once, in that response only),
// revoke; bad input next to its field; another user's runner cannot be revoked (404). And the invite
// page naming the runners that run the company's agents before anyone joins (issue 25, H-a).
import { beforeAll, describe, expect, it } from "vitest";
import { dialRunner } from "../control/runner-link";
import { asSession, call, createUser, type Session } from "../helpers";
import { browse, fieldError, submit, textOf } from "./helpers";

interface Runner {
  id: string;
  name: string;
  companyIds: string[];
  allCompanies: boolean;
  revokedAt: string | null;
}

let owner: Session;
let stranger: Session;
let companyId: string;

const runners = async (session = owner) =>
  (await call<Runner[]>("GET", "/api/runners", { headers: asSession(session) })).body;

beforeAll(async () => {
  owner = await createUser("OWNER");
  stranger = await createUser("OWNER");
  const company = await call<{ id: string }>("POST", "/api/companies", {
    headers: asSession(owner),
    body: { name: `Runner Co ${crypto.randomUUID().slice(0, 6)}` },
  });
  companyId = company.body.id;
});

describe("runners page", () => {
  it("lists your companies to serve and registers a runner, showing its token once", async () => {
    const page = await browse(owner, "/runners");
    expect(page.status).toBe(200);
    expect(page.html).toContain(`name="companyIds:${companyId}"`);

    const created = await submit(owner, "/runners", { name: "laptop", [`companyIds:${companyId}`]: "on" });
    expect(created.status).toBe(200);
    const token = created.html.match(/id="new-runner-token" class="secret" readonly="" value="([^"]+)"/)?.[1];
    expect(token).toBeTruthy();
    const [runner] = await runners();
    expect(runner).toMatchObject({ name: "laptop", companyIds: [companyId], allCompanies: false });
    expect(textOf(created.html)).toContain("laptop");
    expect((await dialRunner(token ?? "")).status).toBe(101);

    const later = await browse(owner, "/runners");
    expect(later.html).not.toContain(token);
  });

  it("shows a missing name and no company next to their fields and registers nothing", async () => {
    const before = (await runners()).length;
    const noName = await submit(owner, "/runners", { name: "", allCompanies: "on" });
    expect(noName.status).toBe(400);
    expect(fieldError(noName.html, "name")).toBeTruthy();
    const noCompany = await submit(owner, "/runners", { name: "nowhere" });
    expect(noCompany.status).toBe(400);
    expect(fieldError(noCompany.html, "companyIds")).toContain("send either companyIds or allCompanies");
    expect((await runners()).length).toBe(before);
  });

  it("revokes a runner; another user can neither see nor revoke it", async () => {
    const [runner] = await runners();
    const denied = await submit(stranger, `/runners/${runner?.id}/revoke`);
    expect(denied.status).toBe(404);
    expect((await runners())[0]?.revokedAt).toBeNull();
    expect((await browse(stranger, "/runners")).html).not.toContain(`/runners/${runner?.id}/revoke`);

    const revoked = await submit(owner, `/runners/${runner?.id}/revoke`);
    expect(revoked.status).toBe(303);
    expect((await runners())[0]?.revokedAt).not.toBeNull();
    expect(textOf((await browse(owner, "/runners")).html)).toContain("revoked");
  });
});

describe("the invite page names the runners that run the company's agents", () => {
  it("an owner invite lists each serving runner by name and owner; joining adds none of the joiner's", async () => {
    const inviter = await createUser("STAFF");
    const invitee = await createUser("OWNER");
    const made = await call<{ id: string }>("POST", "/api/companies", {
      headers: asSession(inviter),
      body: { name: `Invite Co ${crypto.randomUUID().slice(0, 6)}` },
    });
    const joined = made.body.id;
    const invite = async () => {
      const res = await call<{ token: string }>("POST", `/api/companies/${joined}/member-invites`, {
        headers: asSession(inviter),
        body: { role: "owner" },
      });
      expect(res.status).toBe(201);
      return res.body.token;
    };
    const bare = textOf((await browse(invitee, `/invites/${await invite()}`)).html);
    expect(bare).toContain("No runner serves this company yet");

    const registered = await call("POST", `/api/companies/${joined}/runners`, {
      headers: asSession(inviter),
      body: { name: "staff build box" },
    });
    expect(registered.status).toBe(201);
    const own = await call("POST", "/api/runners", {
      headers: asSession(invitee),
      body: { name: "invitee laptop", allCompanies: true },
    });
    expect(own.status).toBe(201);
    const token = await invite();
    const page = await browse(invitee, `/invites/${token}`);
    expect(page.status).toBe(200);
    const text = textOf(page.html);
    expect(text).toMatch(/staff build box\s*, registered by A STAFF \(not connected now\)/);
    expect(text).not.toContain("invitee laptop");
    expect(text).toContain("Joining does not put the company's agents on your runners");

    const accepted = await submit(invitee, `/invites/${token}`);
    expect(accepted.status).toBe(303);
    const serving = await call<Runner[]>("GET", `/api/companies/${joined}/runners`, {
      headers: asSession(invitee),
    });
    expect(serving.body.map((runner) => runner.name)).toEqual(["staff build box"]);
  });
});

describe("the company's runners tab", () => {
  it("a joined owner attaches their runner on purpose; the other owner detaches it; a member sees no buttons", async () => {
    const inviter = await createUser("STAFF");
    const joiner = await createUser("OWNER");
    const member = await createUser("OWNER");
    const made = await call<{ id: string }>("POST", "/api/companies", {
      headers: asSession(inviter),
      body: { name: `Tab Co ${crypto.randomUUID().slice(0, 6)}` },
    });
    const company = made.body.id;
    for (const [who, role] of [
      [joiner, "owner"],
      [member, "member"],
    ] as const) {
      const invite = await call<{ token: string }>("POST", `/api/companies/${company}/member-invites`, {
        headers: asSession(inviter),
        body: { role },
      });
      const joined = await call("POST", `/api/member-invites/${invite.body.token}/accept`, {
        headers: asSession(who),
      });
      expect(joined.status).toBe(200);
    }
    const laptop = await call<{ runner: { id: string } }>("POST", "/api/runners", {
      headers: asSession(joiner),
      body: { name: "joiner laptop", allCompanies: true },
    });
    const serving = async () =>
      (
        await call<Runner[]>("GET", `/api/companies/${company}/runners`, { headers: asSession(inviter) })
      ).body.map((runner) => runner.name);
    expect(await serving()).toEqual([]);

    const page = await browse(joiner, `/companies/${company}/runners`);
    expect(page.status).toBe(200);
    expect(textOf(page.html)).toContain("No runner serves this company");
    const attached = await submit(joiner, `/companies/${company}/runners/attach`, {
      runnerId: laptop.body.runner.id,
    });
    expect(attached.status).toBe(303);
    expect(await serving()).toEqual(["joiner laptop"]);

    const forMember = await browse(member, `/companies/${company}/runners`);
    expect(textOf(forMember.html)).toContain("joiner laptop");
    expect(forMember.html).not.toContain("/detach");
    const refused = await submit(member, `/companies/${company}/runners/${laptop.body.runner.id}/detach`);
    expect(refused.status).toBe(403);
    expect(await serving()).toEqual(["joiner laptop"]);

    const forInviter = await browse(inviter, `/companies/${company}/runners`);
    expect(forInviter.html).toContain(`/companies/${company}/runners/${laptop.body.runner.id}/detach`);
    const detached = await submit(inviter, `/companies/${company}/runners/${laptop.body.runner.id}/detach`);
    expect(detached.status).toBe(303);
    expect(await serving()).toEqual([]);
    const stillTheirs = await runners(joiner);
    expect(stillTheirs[0]).toMatchObject({ name: "joiner laptop", revokedAt: null, companyIds: [] });
  });
});
