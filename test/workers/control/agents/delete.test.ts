// DELETE /agents/:id: board only, terminated agents only, never one that still has open work.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { boardUser, seedAgent, seedCompany, seedIssue } from "../helpers";

type ErrorBody = { error: string; details?: Record<string, unknown> };

const remove = (headers: Record<string, string>, agentId: string) =>
  call<ErrorBody>("DELETE", `/api/agents/${agentId}`, { headers });
const agentRow = (id: string) => env.DB.prepare("SELECT * FROM agents WHERE id = ?").bind(id).first();
const count = async (query: string, id: string) =>
  (await env.DB.prepare(query).bind(id).first<{ n: number }>())?.n;

async function seedCost(companyId: string, agentId: string) {
  await env.DB.prepare(
    `INSERT INTO cost_events (id, company_id, agent_id, provider, billing_type, input_tokens,
       cached_input_tokens, output_tokens, cost_cents, occurred_at, created_at)
     VALUES (?, ?, ?, 'anthropic', 'metered_api', 1, 0, 1, 42, ?, ?)`,
  )
    .bind(crypto.randomUUID(), companyId, agentId, Date.now(), Date.now())
    .run();
}

describe("DELETE /agents/:id", () => {
  it("is 409 until the agent is terminated, then deletes it with its keys, runs and costs", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await seedAgent(company.id);
    const done = await seedIssue(company, { status: "done", assigneeAgentId: agent.id });
    await seedCost(company.id, agent.id);
    const active = await remove(board.headers, agent.id);
    expect(active.status).toBe(409);
    expect(active.body.error).toMatch(/terminate/i);
    expect(await agentRow(agent.id)).not.toBeNull();
    expect((await call("POST", `/api/agents/${agent.id}/terminate`, { headers: board.headers })).status).toBe(
      200,
    );
    expect((await remove(board.headers, agent.id)).status).toBe(204);
    expect(await agentRow(agent.id)).toBeNull();
    expect(await count("SELECT count(*) AS n FROM agent_api_keys WHERE agent_id = ?", agent.id)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM cost_events WHERE agent_id = ?", agent.id)).toBe(0);
    // Finished work keeps its record.
    expect(await count("SELECT count(*) AS n FROM issues WHERE id = ?", done.id)).toBe(1);
    const log = await env.DB.prepare(
      "SELECT details FROM activity_log WHERE entity_id = ? AND action = 'agent.deleted'",
    )
      .bind(agent.id)
      .first<{ details: string }>();
    expect(JSON.parse(log?.details ?? "{}")).toMatchObject({ name: agent.name, costCents: 42 });
    expect((await call("GET", `/api/agents/${agent.id}`, { headers: board.headers })).status).toBe(404);
  });

  it("is 409 naming the open issues and routines still assigned to it", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const agent = await seedAgent(company.id);
    const open = await seedIssue(company, { status: "todo", assigneeAgentId: agent.id });
    const project = await call<{ id: string }>("POST", `/api/companies/${company.id}/projects`, {
      headers: board.headers,
      body: { name: "Ops" },
    });
    const routine = await call<{ id: string }>("POST", `/api/companies/${company.id}/routines`, {
      headers: board.headers,
      body: { title: "Nightly sweep", assigneeAgentId: agent.id, projectId: project.body.id },
    });
    await env.DB.prepare("UPDATE agents SET status = 'terminated' WHERE id = ?").bind(agent.id).run();
    const res = await remove(board.headers, agent.id);
    expect(res.status).toBe(409);
    expect(res.body.error).toBe(
      `Reassign, cancel or delete the agent's work first: open issues ${open.identifier}; routines "Nightly sweep"`,
    );
    expect(res.body.details).toMatchObject({ openIssueIds: [open.id], routineIds: [routine.body.id] });
    expect(await agentRow(agent.id)).not.toBeNull();
  });

  it("is the board's: agents 403, other companies 404", async () => {
    const board = await boardUser();
    const company = await seedCompany(board);
    const ceo = await seedAgent(company.id, { role: "ceo" });
    const agent = await seedAgent(company.id, { status: "terminated" });
    const outsider = await boardUser();
    await seedCompany(outsider);
    expect((await remove(ceo.headers, agent.id)).status).toBe(403);
    expect((await remove(outsider.headers, agent.id)).status).toBe(404);
    expect((await remove(board.headers, crypto.randomUUID())).status).toBe(404);
    expect(await agentRow(agent.id)).not.toBeNull();
  });
});
