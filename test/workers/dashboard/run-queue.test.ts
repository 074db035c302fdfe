// A queued run's place in its company's queue on the dashboard (issue 32): the run's page and the
// agent's runs say which number it is while a runner serves the company but the company's cap is full.
import { describe, expect, it } from "vitest";
import { seedAgent, seedCompany } from "../control/helpers";
import { runnerFor } from "../control/runner-link";
import { asKey, asSession, call, createUser, generateKey } from "../helpers";
import { browse, textOf } from "./helpers";

describe("queue position on the dashboard", () => {
  it("shows a queued run's number in the company's queue on its page and the agent's runs", async () => {
    const session = await createUser("OWNER");
    const key = await generateKey(session);
    const owner = { userId: session.userId, key, headers: asKey(key) };
    const company = await seedCompany(owner);
    await call("PATCH", `/api/companies/${company.id}`, {
      headers: asSession(session),
      body: { maxConcurrentRuns: 1 },
    });
    const first = await seedAgent(company.id, { name: "First", adapterConfig: { command: "true" } });
    const second = await seedAgent(company.id, { name: "Second", adapterConfig: { command: "true" } });
    const invoke = (agentId: string) =>
      call<{ id: string }>("POST", `/api/agents/${agentId}/heartbeat/invoke`, { headers: owner.headers });
    await invoke(first.id);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const waiting = (await invoke(second.id)).body;
    const link = await runnerFor(owner, company.id);
    link.send({ type: "claim", slots: 2 });
    await link.next((frame) => frame.type === "run");

    const page = textOf((await browse(session, `/runs/${waiting.id}`)).html);
    expect(page).toContain("Queued: number 1 in the company's queue");
    const agentPage = textOf((await browse(session, `/agents/${second.id}`)).html);
    expect(agentPage).toContain("(number 1 in the company's queue)");
  });
});
