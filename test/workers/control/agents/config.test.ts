import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import {
  activityOf,
  type BoardUser,
  boardUser,
  type SeededCompany,
  seedAgent,
  seedCompany,
  seedOrg,
} from "../helpers";

// PATCH, config revisions and rollback, redacted configuration reads, and the instructions path.

type Json = Record<string, unknown>;
const REDACTED = "***REDACTED***";

const patch = (agentId: string, headers: Record<string, string>, body: unknown) =>
  call<Json>("PATCH", `/api/agents/${agentId}`, { headers, body });
const revisions = async (agentId: string, headers: Record<string, string>) =>
  (await call<Json[]>("GET", `/api/agents/${agentId}/config-revisions`, { headers })).body;

let board: BoardUser;
let company: SeededCompany;

beforeAll(async () => {
  board = await boardUser();
});

// A company per test: seedOrg adds a CEO, and a company has at most one (agents_one_ceo_uq).
beforeEach(async () => {
  company = await seedCompany(board);
});

describe("PATCH /agents/:agentId", () => {
  it("updates fields, writes a config revision for config changes and logs agent.updated", async () => {
    const org = await seedOrg(company.id);
    const res = await patch(org.engineer.id, org.manager.headers, {
      title: "Backend",
      adapterConfig: { cwd: "/srv/app", model: "gpt-5" },
      runtimeConfig: { heartbeat: { enabled: true, intervalSec: 600 } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      title: "Backend",
      adapterConfig: { cwd: "/srv/app", model: "gpt-5" },
      runtimeConfig: { heartbeat: { enabled: true, intervalSec: 600, wakeOnDemand: true } },
    });
    const [revision] = await revisions(org.engineer.id, board.headers);
    expect(revision).toMatchObject({
      source: "patch",
      changedKeys: ["adapterConfig", "runtimeConfig"],
      beforeConfig: expect.objectContaining({ adapterConfig: { cwd: "/work" } }),
      afterConfig: expect.objectContaining({ adapterConfig: { cwd: "/srv/app", model: "gpt-5" } }),
      createdByAgentId: org.manager.id,
    });
    expect((await activityOf(org.engineer.id)).map((entry) => entry.action)).toEqual(["agent.updated"]);

    const titleOnly = await patch(org.engineer.id, board.headers, { title: "Platform" });
    expect(titleOnly.status).toBe(200);
    expect(await revisions(org.engineer.id, board.headers)).toHaveLength(1);
  });

  it("applies the permission rules: self yes (not budget, reportsTo, role), peers no", async () => {
    const org = await seedOrg(company.id);
    expect((await patch(org.engineer.id, org.engineer.headers, { capabilities: "Go, SQL" })).status).toBe(
      200,
    );
    expect((await patch(org.engineer.id, org.engineer.headers, { budgetMonthlyCents: 5000 })).status).toBe(
      403,
    );
    expect((await patch(org.engineer.id, org.engineer.headers, { reportsTo: org.ceo.id })).status).toBe(403);
    expect((await patch(org.engineer.id, org.engineer.headers, { role: "cto" })).status).toBe(403);
    expect((await patch(org.engineer.id, org.peer.headers, { title: "x" })).status).toBe(403);
    expect((await patch(org.manager.id, org.engineer.headers, { title: "x" })).status).toBe(403);
    expect(
      (await patch(org.engineer.id, org.ceo.headers, { budgetMonthlyCents: 5000 })).body.budgetMonthlyCents,
    ).toBe(5000);
  });

  it("validates names, CEO uniqueness, reporting cycles and strict bodies", async () => {
    const org = await seedOrg(company.id);
    expect((await patch(org.engineer.id, board.headers, { name: org.peer.name.toUpperCase() })).status).toBe(
      409,
    );
    expect((await patch(org.engineer.id, board.headers, { role: "ceo" })).status).toBe(422);
    expect((await patch(org.manager.id, board.headers, { reportsTo: org.engineer.id })).status).toBe(422);
    expect((await patch(org.manager.id, board.headers, { reportsTo: org.manager.id })).status).toBe(422);
    expect((await patch(org.engineer.id, board.headers, { status: "idle" })).status).toBe(400);
    expect((await patch(org.engineer.id, board.headers, { desiredSkills: ["ghost"] })).status).toBe(422);
    const moved = await patch(org.engineer.id, board.headers, {
      reportsTo: org.ceo.id,
      name: `${org.engineer.name} II`,
    });
    expect(moved.status).toBe(200);
    expect(moved.body.reportsTo).toBe(org.ceo.id);
  });
});

describe("config revisions and rollback", () => {
  it("rollback restores the revision's beforeConfig and records a rollback revision", async () => {
    const org = await seedOrg(company.id);
    await patch(org.engineer.id, board.headers, { adapterConfig: { cwd: "/a", model: "one" } });
    await patch(org.engineer.id, board.headers, {
      adapterConfig: { cwd: "/b", model: "two" },
      adapterType: "assistant_local",
    });
    const [second, first] = await revisions(org.engineer.id, board.headers);
    expect(second?.afterConfig).toMatchObject({ adapterType: "assistant_local" });
    expect(first?.afterConfig).toMatchObject({ adapterConfig: { cwd: "/a", model: "one" } });

    const res = await call<Json>(
      "POST",
      `/api/agents/${org.engineer.id}/config-revisions/${second?.id}/rollback`,
      {
        headers: org.engineer.headers,
      },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      adapterType: "coder_local",
      adapterConfig: { cwd: "/a", model: "one" },
    });
    const [latest] = await revisions(org.engineer.id, board.headers);
    expect(latest).toMatchObject({
      source: "rollback",
      rolledBackFromRevisionId: second?.id,
      changedKeys: ["adapterType", "adapterConfig"],
    });
    expect((await activityOf(org.engineer.id)).map((entry) => entry.action)).toContain(
      "agent.config_rolled_back",
    );

    const other = await seedOrg((await seedCompany(board)).id);
    const foreign = `/api/agents/${other.engineer.id}/config-revisions/${second?.id}/rollback`;
    expect((await call("POST", foreign, { headers: board.headers })).status).toBe(404);
    const peer = `/api/agents/${org.engineer.id}/config-revisions/${first?.id}/rollback`;
    expect((await call("POST", peer, { headers: org.peer.headers })).status).toBe(403);
  });
});

describe("redaction", () => {
  it("redacts secrets in the agent resource, configuration, configurations and revisions, keeping them on write-back", async () => {
    const agent = await seedAgent(company.id, {
      adapterConfig: {
        cwd: "/w",
        apiKey: "sk-secret-1",
        env: { OPENAI_API_KEY: "sk-secret-2", LOG_LEVEL: "debug" },
      },
    });
    const one = await call<Json>("GET", `/api/agents/${agent.id}`, { headers: board.headers });
    expect(one.body.adapterConfig).toEqual({
      cwd: "/w",
      apiKey: REDACTED,
      env: { OPENAI_API_KEY: REDACTED, LOG_LEVEL: "debug" },
    });
    const configuration = await call<Json>("GET", `/api/agents/${agent.id}/configuration`, {
      headers: agent.headers,
    });
    expect(configuration.status).toBe(200);
    expect(configuration.body).toMatchObject({
      agentId: agent.id,
      adapterType: "coder_local",
      instructionsFilePath: null,
    });
    expect(JSON.stringify(configuration.body)).not.toContain("sk-secret");
    const all = await call<Json[]>("GET", `/api/companies/${company.id}/agent-configurations`, {
      headers: board.headers,
    });
    expect(all.body.some((entry) => entry.agentId === agent.id)).toBe(true);
    expect(JSON.stringify(all.body)).not.toContain("sk-secret");
    const list = await call("GET", `/api/companies/${company.id}/agents`, { headers: board.headers });
    expect(JSON.stringify(list.body)).not.toContain("sk-secret");

    const written = await patch(agent.id, board.headers, {
      adapterConfig: { ...(one.body.adapterConfig as Json), model: "gpt-5" },
    });
    expect(written.status).toBe(200);
    const history = await call<Json[]>("GET", `/api/agents/${agent.id}/config-revisions`, {
      headers: board.headers,
    });
    expect(JSON.stringify(history.body)).not.toContain("sk-secret");
    const [revision] = history.body;
    expect(revision?.changedKeys).toEqual(["adapterConfig"]);
    // The placeholder written back kept the real secret.
    const stored = await env.DB.prepare("SELECT adapter_config FROM agents WHERE id = ?")
      .bind(agent.id)
      .first<Json>();
    expect(JSON.parse(String(stored?.adapter_config))).toMatchObject({
      apiKey: "sk-secret-1",
      env: { OPENAI_API_KEY: "sk-secret-2" },
      model: "gpt-5",
    });
    const logged = await env.DB.prepare("SELECT details FROM activity_log WHERE entity_id = ?")
      .bind(agent.id)
      .all();
    expect(JSON.stringify(logged.results)).not.toContain("sk-secret");
  });
});

describe("PATCH /agents/:agentId/instructions-path", () => {
  const setPath = (agentId: string, headers: Record<string, string>, body: Json) =>
    call<Json>("PATCH", `/api/agents/${agentId}/instructions-path`, { headers, body });

  it("allows the agent itself and managers above it; peers and subordinates get 403", async () => {
    const org = await seedOrg(company.id);
    const rows: Array<[string, Record<string, string>, number]> = [
      ["self", org.engineer.headers, 200],
      ["manager", org.manager.headers, 200],
      ["ceo (ancestor)", org.ceo.headers, 200],
      ["board", board.headers, 200],
      ["peer", org.peer.headers, 403],
    ];
    for (const [who, headers, status] of rows) {
      const res = await setPath(org.engineer.id, headers, { path: `/docs/${who.length}.md` });
      expect(res.status, who).toBe(status);
    }
    expect((await setPath(org.manager.id, org.engineer.headers, { path: "/x.md" })).status).toBe(403);
  });

  it("resolves relative paths against cwd, stores absolute paths as is, clears with null, and logs", async () => {
    const agent = await seedAgent(company.id, { adapterConfig: { cwd: "/srv/repo" } });
    const relative = await setPath(agent.id, agent.headers, { path: "./docs/../agents/./AGENTS.md" });
    expect(relative.status, JSON.stringify(relative.body)).toBe(200);
    expect((relative.body.adapterConfig as Json).instructionsFilePath).toBe("/srv/repo/agents/AGENTS.md");
    const custom = await setPath(agent.id, agent.headers, {
      path: "/etc/agent/rules.md",
      adapterConfigKey: "rulesPath",
    });
    expect((custom.body.adapterConfig as Json).rulesPath).toBe("/etc/agent/rules.md");
    const configuration = await call<Json>("GET", `/api/agents/${agent.id}/configuration`, {
      headers: board.headers,
    });
    expect(configuration.body.instructionsFilePath).toBe("/srv/repo/agents/AGENTS.md");
    const cleared = await setPath(agent.id, agent.headers, { path: null });
    expect(cleared.body.adapterConfig).toEqual({ cwd: "/srv/repo", rulesPath: "/etc/agent/rules.md" });
    const history = await revisions(agent.id, board.headers);
    expect(history.map((revision) => revision.source)).toEqual([
      "instructions_path",
      "instructions_path",
      "instructions_path",
    ]);
    expect((await activityOf(agent.id)).map((entry) => entry.action)).toEqual([
      "agent.instructions_path_set",
      "agent.instructions_path_set",
      "agent.instructions_path_set",
    ]);
  });

  it("refuses a relative path without cwd (422) and unsafe keys (400)", async () => {
    const agent = await seedAgent(company.id, { adapterConfig: {} });
    expect((await setPath(agent.id, board.headers, { path: "AGENTS.md" })).status).toBe(422);
    expect((await setPath(agent.id, board.headers, { path: "/a.md", adapterConfigKey: "env" })).status).toBe(
      400,
    );
    expect((await setPath(agent.id, board.headers, { path: "/a.md", adapterConfigKey: "../x" })).status).toBe(
      400,
    );
    expect(
      (await setPath(agent.id, board.headers, { path: "/a.md", adapterConfigKey: "apiKeyPath" })).status,
    ).toBe(400);
    expect((await setPath(agent.id, board.headers, {})).status).toBe(400);
  });
});
