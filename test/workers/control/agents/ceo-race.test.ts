// One CEO per company, also when two requests race: the check in the handler reads the agents before
// either write lands, so the partial unique index agents_one_ceo_uq is what makes the rule hold.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { boardUser, seedAgent, seedCompany } from "../helpers";

async function liveCeos(companyId: string): Promise<number> {
  const row = await env.DB.prepare(
    "SELECT count(*) AS n FROM agents WHERE company_id = ? AND role = 'ceo' AND status <> 'terminated'",
  )
    .bind(companyId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

describe("one CEO per company under concurrency", () => {
  it("two simultaneous promotions: one 200, one 422, one CEO stored", async () => {
    for (let round = 0; round < 5; round++) {
      const board = await boardUser();
      const company = await seedCompany(board);
      const a = await seedAgent(company.id);
      const b = await seedAgent(company.id);
      const results = await Promise.all(
        [a, b].map((agent) =>
          call("PATCH", `/api/agents/${agent.id}`, { headers: board.headers, body: { role: "ceo" } }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 422]);
      expect(results.find((r) => r.status === 422)?.body).toMatchObject({
        error: "This company already has a CEO",
      });
      expect(await liveCeos(company.id)).toBe(1);
    }
  });

  it("five simultaneous CEO hires: one 201, four 422, one CEO stored", async () => {
    const board = await boardUser();
    const company = await seedCompany(board, { requireBoardApprovalForNewAgents: false });
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        call("POST", `/api/companies/${company.id}/agents`, {
          headers: board.headers,
          body: {
            name: `Chief ${i} ${crypto.randomUUID().slice(0, 4)}`,
            role: "ceo",
            adapterType: "coder_local",
          },
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 422, 422, 422, 422]);
    expect(await liveCeos(company.id)).toBe(1);
  });

  it("a terminated CEO does not count: a new one may be appointed", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    await seedAgent(company.id, { role: "ceo", status: "terminated" });
    const next = await seedAgent(company.id);
    const promoted = await call("PATCH", `/api/agents/${next.id}`, {
      headers: board.headers,
      body: { role: "ceo" },
    });
    expect(promoted.status).toBe(200);
    expect(await liveCeos(company.id)).toBe(1);
  });
});
