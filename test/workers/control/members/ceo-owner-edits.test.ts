// The CEO agent may make company edits the company otherwise reserves for its owners (branding,
// external-agent invites). A member who is not an owner must not reach them through it (issue 25,
// low): not by minting the CEO a key, not with a CEO key they minted while an owner, not by changing
// what the CEO runs or making an agent the CEO.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { seedAgent } from "../helpers";
import { joinAs, seedTeam } from "./fixtures";

type Failure = { error: string };

const mint = (agentId: string, headers: Record<string, string>) =>
  call<{ token: string } & Failure>("POST", `/api/agents/${agentId}/keys`, {
    headers,
    body: { name: "mine" },
  });

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

const rename = (companyId: string, headers: Record<string, string>, name: string) =>
  call<{ name: string } & Failure>("PATCH", `/api/companies/${companyId}`, { headers, body: { name } });

const invitePrompt = (companyId: string, headers: Record<string, string>) =>
  call("POST", `/api/companies/${companyId}/external-agent/invite-prompt`, { headers, body: {} });

describe("owner-only company edits through the CEO agent (issue 25, low)", () => {
  it("refuses a member who is not an owner a key for the CEO agent (403); an owner gets one", async () => {
    const { owner, company, member } = await seedTeam();
    const ceo = await seedAgent(company.id, { role: "ceo" });
    const refused = await mint(ceo.id, member.headers);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatch(/owners/);
    expect((await rename(company.id, member.headers, "Member's name")).status).toBe(403);

    const granted = await mint(ceo.id, owner.headers);
    expect(granted.status).toBe(201);
    const renamed = await rename(company.id, bearer(granted.body.token), "CEO's name");
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe("CEO's name");
    // A member still mints keys for the other agents.
    expect((await mint((await seedAgent(company.id)).id, member.headers)).status).toBe(201);
  });

  it("refuses owner-only edits with a CEO key minted by someone who is no longer an owner", async () => {
    const { owner, company } = await seedTeam();
    const ceo = await seedAgent(company.id, { role: "ceo" });
    const formerOwner = await joinAs(company, "owner");
    const minted = await mint(ceo.id, formerOwner.headers);
    expect(minted.status).toBe(201);
    const demoted = await call("PATCH", `/api/companies/${company.id}/members/${formerOwner.userId}`, {
      headers: owner.headers,
      body: { role: "member" },
    });
    expect(demoted.status).toBe(200);

    const renamed = await rename(company.id, bearer(minted.body.token), "Taken over");
    expect(renamed.status).toBe(403);
    expect(renamed.body.error).toMatch(/owner/);
    expect((await invitePrompt(company.id, bearer(minted.body.token))).status).toBe(403);
    const current = await call<{ name: string }>("GET", `/api/companies/${company.id}`, {
      headers: owner.headers,
    });
    expect(current.body.name).not.toBe("Taken over");
    // The CEO's own seeded key (minted by the platform) keeps the CEO's powers.
    expect((await invitePrompt(company.id, ceo.headers)).status).toBe(201);
  });

  it("refuses a member who is not an owner changing what the CEO runs or making an agent the CEO", async () => {
    const { owner, company, member } = await seedTeam();
    const ceo = await seedAgent(company.id, { role: "ceo" });
    const patchCeo = (headers: Record<string, string>, body: Record<string, unknown>) =>
      call("PATCH", `/api/agents/${ceo.id}`, { headers, body });
    const command = { adapterType: "process", adapterConfig: { command: "env", cwd: "/tmp" } };
    expect((await patchCeo(member.headers, command)).status).toBe(403);
    expect((await patchCeo(member.headers, { title: "Chief" })).status).toBe(200);
    expect((await patchCeo(owner.headers, command)).status).toBe(200);

    const other = await seedTeam();
    const engineer = await seedAgent(other.company.id);
    const promote = await call("PATCH", `/api/agents/${engineer.id}`, {
      headers: other.member.headers,
      body: { role: "ceo" },
    });
    expect(promote.status).toBe(403);
    const hire = await call("POST", `/api/companies/${other.company.id}/agents`, {
      headers: other.member.headers,
      body: { name: "New CEO", role: "ceo", adapterType: "process", adapterConfig: { command: "env" } },
    });
    expect(hire.status).toBe(403);
    const byOwner = await call("PATCH", `/api/agents/${engineer.id}`, {
      headers: other.owner.headers,
      body: { role: "ceo" },
    });
    expect(byOwner.status).toBe(200);
  });
  it("refuses a member who is not an owner a package that brings the company its CEO (403, nothing created)", async () => {
    const { owner, company, member } = await seedTeam();
    const files = {
      "COMPANY.md": "---\nname: Takeover Co\nschema: agentcompanies/v1\n---\n\nImported.\n",
      "agents/boss/AGENTS.md": "---\nname: Boss\n---\n\nYou run things.\n",
      ".switchboard.yaml": [
        "schema: switchboard/v1",
        "agents:",
        "  boss:",
        "    role: ceo",
        "    adapterConfig:",
        "      command: env",
        "",
      ].join("\n"),
    };
    const targets = [{ mode: "existing_company", companyId: company.id }, { mode: "new_company" }];
    for (const target of targets)
      for (const step of ["preview", "apply"]) {
        const refused = await call<Failure>("POST", `/api/companies/${company.id}/imports/${step}`, {
          headers: member.headers,
          body: { source: { type: "inline", files }, target },
        });
        expect(refused.status, `${target.mode} ${step}`).toBe(403);
        expect(refused.body.error).toMatch(/owner/);
      }
    const bosses = await env.DB.prepare(
      "SELECT count(*) AS n FROM agents WHERE name = 'Boss' AND company_id = ?",
    )
      .bind(company.id)
      .first<{ n: number }>();
    expect(bosses?.n).toBe(0);
    const byOwner = await call("POST", `/api/companies/${company.id}/imports/apply`, {
      headers: owner.headers,
      body: { source: { type: "inline", files }, target: targets[0] },
    });
    expect(byOwner.status, JSON.stringify(byOwner.body)).toBe(201);
  });
});
