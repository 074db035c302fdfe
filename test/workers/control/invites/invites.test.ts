// Invite prompts for external agents: who may create them, the one-time onboarding text, expiry.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../../../workers/auth/crypto";
import { BASE, call, fetchWorker } from "../../helpers";
import { activityOf, boardUser, seedAgent, seedCompany, seedTwoTenants } from "../helpers";

type Invite = { id: string; token: string; expiresAt: string; onboardingUrl: string; prompt: string };

const invitePath = (companyId: string) => `/api/companies/${companyId}/external-agent/invite-prompt`;

async function createInvite(companyId: string, headers: Record<string, string>, body: unknown = {}) {
  const res = await call<Invite>("POST", invitePath(companyId), { headers, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** The onboarding URL fetched with no credentials at all. */
async function fetchOnboarding(url: string) {
  const res = await fetchWorker(url);
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
}

describe("POST /companies/:companyId/external-agent/invite-prompt", () => {
  it("returns a one-time token, its onboarding URL, expiry and a prompt; stores only the hash", async () => {
    const { owner, company } = await seedTwoTenants();
    const before = Date.now();
    const invite = await createInvite(company.id, owner.headers);
    expect(invite.token).toMatch(/^swi_[0-9A-Za-z]{43}$/);
    expect(invite.onboardingUrl).toBe(`${BASE}/llms/onboarding/${invite.token}.txt`);
    const expires = Date.parse(invite.expiresAt);
    expect(expires - before).toBeGreaterThanOrEqual(60 * 60_000 - 1000);
    expect(expires - before).toBeLessThanOrEqual(60 * 60_000 + 5000);
    expect(invite.prompt).toContain(invite.onboardingUrl);
    expect(invite.prompt).toContain(company.name);

    const stored = await env.DB.prepare("SELECT * FROM invite_tokens WHERE id = ?")
      .bind(invite.id)
      .first<Record<string, unknown>>();
    expect(stored?.token_hash).toBe(await sha256Hex(invite.token));
    expect(JSON.stringify(stored)).not.toContain(invite.token);
    expect((await activityOf(invite.id)).map((row) => row.action)).toEqual(["invite.created"]);
  });

  it("accepts expiresInMinutes up to a day and an agentMessage; rejects bad bodies", async () => {
    const { owner, company } = await seedTwoTenants();
    const day = await createInvite(company.id, owner.headers, {
      expiresInMinutes: 1440,
      agentMessage: "Start with the backlog.",
    });
    expect(Date.parse(day.expiresAt) - Date.now()).toBeGreaterThan(1439 * 60_000);
    expect(day.prompt).toContain("Start with the backlog.");
    const noBody = await call<Invite>("POST", invitePath(company.id), { headers: owner.headers });
    expect(noBody.status).toBe(201);
    for (const body of [
      { expiresInMinutes: 0 },
      { expiresInMinutes: 1441 },
      { expiresInMinutes: 1.5 },
      { x: 1 },
    ]) {
      const res = await call("POST", invitePath(company.id), { headers: owner.headers, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });

  it("allows company owners and the CEO agent only", async () => {
    const owner = await boardUser();
    const member = await boardUser();
    const company = await seedCompany(owner, { members: [member] });
    const ceo = await seedAgent(company.id, { role: "ceo" });
    const engineer = await seedAgent(company.id, { role: "engineer", reportsTo: ceo.id });
    const outsider = await boardUser();

    expect((await call("POST", invitePath(company.id), { headers: member.headers, body: {} })).status).toBe(
      403,
    );
    expect((await call("POST", invitePath(company.id), { headers: engineer.headers, body: {} })).status).toBe(
      403,
    );
    expect((await call("POST", invitePath(company.id), { headers: outsider.headers, body: {} })).status).toBe(
      404,
    );
    const byCeo = await createInvite(company.id, ceo.headers);
    const row = await env.DB.prepare("SELECT created_by_agent_id FROM invite_tokens WHERE id = ?")
      .bind(byCeo.id)
      .first<{ created_by_agent_id: string }>();
    expect(row?.created_by_agent_id).toBe(ceo.id);

    const otherCompany = await seedCompany(outsider);
    const foreign = await call("POST", invitePath(otherCompany.id), { headers: ceo.headers, body: {} });
    expect(foreign.status).toBe(404);
    expect(
      await env.DB.prepare("SELECT count(*) AS n FROM invite_tokens WHERE company_id = ?")
        .bind(company.id)
        .first<{ n: number }>(),
    ).toEqual({ n: 1 });
  });
});

describe("GET /llms/onboarding/:token.txt", () => {
  it("serves the onboarding text once, without credentials", async () => {
    const { owner, company } = await seedTwoTenants();
    const invite = await createInvite(company.id, owner.headers);
    const first = await fetchOnboarding(invite.onboardingUrl);
    expect(first.status).toBe(200);
    expect(first.type).toBe("text/plain; charset=utf-8");
    for (const phrase of [
      company.name,
      company.id,
      `${BASE}/api`,
      "Authorization: Bearer",
      "GET http://switchboard.test/api/agents/me",
      "/checkout",
      "/heartbeat-context",
      "PLATFORM_API_KEY",
    ])
      expect(first.text).toContain(phrase);

    const again = await fetchOnboarding(invite.onboardingUrl);
    expect(again.status).toBe(410);
    expect(again.text).toContain("already used");
    const actions = (await activityOf(invite.id)).map((row) => row.action);
    expect(actions).toEqual(["invite.created", "invite.redeemed"]);
  });

  it("answers 410 once expired (without using it) and 404 for an unknown or malformed token", async () => {
    const { owner, company } = await seedTwoTenants();
    const invite = await createInvite(company.id, owner.headers, { expiresInMinutes: 1 });
    await env.DB.prepare("UPDATE invite_tokens SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, invite.id)
      .run();
    const expired = await fetchOnboarding(invite.onboardingUrl);
    expect(expired.status).toBe(410);
    expect(expired.text).toContain("expired");
    const row = await env.DB.prepare("SELECT used_at FROM invite_tokens WHERE id = ?")
      .bind(invite.id)
      .first<{ used_at: number | null }>();
    expect(row?.used_at).toBeNull();
    expect((await fetchOnboarding(`${BASE}/llms/onboarding/swi_${"a".repeat(43)}.txt`)).status).toBe(404);
    expect((await fetchOnboarding(`${BASE}/llms/onboarding/${invite.token}`)).status).toBe(404);
  });

  it("lets exactly one of two simultaneous fetches through", async () => {
    const { owner, company } = await seedTwoTenants();
    const invite = await createInvite(company.id, owner.headers);
    const results = await Promise.all([
      fetchOnboarding(invite.onboardingUrl),
      fetchOnboarding(invite.onboardingUrl),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 410]);
    expect((await activityOf(invite.id)).filter((row) => row.action === "invite.redeemed")).toHaveLength(1);
  });
});
