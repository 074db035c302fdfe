// The company's prices per provider and model (issue 32): owners set them, everyone in the company
// reads them, bad tables are 400 and change nothing, and every run a runner claims carries them.
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { addMembership, boardUser, seedAgent, seedCompany } from "../helpers";
import { claimOne, runnerFor } from "../runner-link";

const TABLE = {
  ollama: { "*": { input: 0, output: 0 } },
  openai: { "gpt-5-mini": { input: 0.2, cachedInput: 0.02, output: 1.6 } },
};

describe("model prices", () => {
  it("owners set the table, members and agents read it, runs carry it; bad tables are refused", async () => {
    const owner = await boardUser();
    const member = await boardUser();
    const company = await seedCompany(owner);
    await addMembership(company.id, member.userId, "member");
    const agent = await seedAgent(company.id, { adapterConfig: { command: "sleep" } });
    const path = `/api/companies/${company.id}/model-prices`;

    expect((await call("GET", path, { headers: owner.headers })).body).toEqual({
      companyId: company.id,
      prices: {},
    });
    const set = await call("PUT", path, { headers: owner.headers, body: { prices: TABLE } });
    expect(set.status).toBe(200);
    expect((await call("GET", path, { headers: agent.headers })).body).toEqual({
      companyId: company.id,
      prices: TABLE,
    });

    const refused = [
      await call("PUT", path, { headers: member.headers, body: { prices: {} } }),
      await call("PUT", path, {
        headers: owner.headers,
        body: { prices: { "bad provider": { "*": { input: 1, output: 1 } } } },
      }),
      await call("PUT", path, {
        headers: owner.headers,
        body: { prices: { openai: { "*": { input: -1, output: 1 } } } },
      }),
      await call("PUT", path, {
        headers: owner.headers,
        body: { prices: { openai: { "*": { input: 1 } } } },
      }),
      await call("PUT", path, { headers: owner.headers, body: { table: TABLE } }),
    ];
    expect(refused.map((res) => res.status)).toEqual([403, 400, 400, 400, 400]);
    expect((await call("GET", path, { headers: member.headers })).body).toEqual({
      companyId: company.id,
      prices: TABLE,
    });
    const stranger = await boardUser();
    expect((await call("GET", path, { headers: stranger.headers })).status).toBe(404);

    expect(
      (await call("POST", `/api/agents/${agent.id}/heartbeat/invoke`, { headers: owner.headers })).status,
    ).toBe(202);
    const link = await runnerFor(owner, company.id);
    const run = (await claimOne(link)) as { modelPrices?: unknown };
    expect(run.modelPrices).toEqual(TABLE);

    expect((await call("PUT", path, { headers: owner.headers, body: { prices: {} } })).status).toBe(200);
    expect((await call("GET", path, { headers: owner.headers })).body).toEqual({
      companyId: company.id,
      prices: {},
    });
  });
});
