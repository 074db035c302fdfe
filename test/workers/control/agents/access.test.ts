import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { type BoardUser, boardUser, type SeededCompany, seedCompany, seedOrg } from "../helpers";

// Tenancy: another company's agents and companies answer 404 on every agent route, to board users
// who are not members and to agents of other companies alike, and nothing is written.

type Org = Awaited<ReturnType<typeof seedOrg>>;

let owner: BoardUser;
let outsider: BoardUser;
let home: SeededCompany;
let away: SeededCompany;
let homeOrg: Org;
let awayOrg: Org;
let revisionId: string;

beforeAll(async () => {
  owner = await boardUser();
  outsider = await boardUser();
  home = await seedCompany(owner);
  away = await seedCompany(outsider);
  homeOrg = await seedOrg(home.id);
  awayOrg = await seedOrg(away.id);
  const patched = await call("PATCH", `/api/agents/${homeOrg.engineer.id}`, {
    headers: owner.headers,
    body: { adapterConfig: { cwd: "/x" } },
  });
  expect(patched.status).toBe(200);
  const revisions = await call<Array<{ id: string }>>(
    "GET",
    `/api/agents/${homeOrg.engineer.id}/config-revisions`,
    {
      headers: owner.headers,
    },
  );
  revisionId = revisions.body[0]?.id ?? "";
});

const agentRoutes = (agentId: string): Array<[string, string, unknown?]> => [
  ["GET", `/api/agents/${agentId}`],
  ["PATCH", `/api/agents/${agentId}`, { title: "x" }],
  ["POST", `/api/agents/${agentId}/pause`],
  ["POST", `/api/agents/${agentId}/resume`],
  ["POST", `/api/agents/${agentId}/terminate`],
  ["POST", `/api/agents/${agentId}/keys`, {}],
  ["GET", `/api/agents/${agentId}/keys`],
  ["DELETE", `/api/agents/${agentId}/keys/${crypto.randomUUID()}`],
  ["POST", `/api/agents/${agentId}/heartbeat/invoke`],
  ["GET", `/api/agents/${agentId}/config-revisions`],
  ["POST", `/api/agents/${agentId}/config-revisions/${revisionId}/rollback`],
  ["GET", `/api/agents/${agentId}/configuration`],
  ["PATCH", `/api/agents/${agentId}/instructions-path`, { path: "/a.md" }],
  ["POST", `/api/agents/${agentId}/skills/sync`, { desiredSkills: [] }],
];

const companyRoutes = (companyId: string): Array<[string, string, unknown?]> => [
  ["GET", `/api/companies/${companyId}/agents`],
  ["POST", `/api/companies/${companyId}/agents`, { name: "Intruder", adapterType: "coder_local" }],
  ["POST", `/api/companies/${companyId}/agent-hires`, { name: "Intruder", adapterType: "coder_local" }],
  ["GET", `/api/companies/${companyId}/org`],
  ["GET", `/api/companies/${companyId}/agent-configurations`],
  ["GET", `/api/companies/${companyId}/skills`],
  ["POST", `/api/companies/${companyId}/skills/import`, { skills: [{ name: "Intrusion" }] }],
  ["GET", `/api/companies/${companyId}/adapters/coder_local/models`],
];

async function snapshot() {
  const row = await env.DB.prepare(
    `SELECT (SELECT count(*) FROM agents) + (SELECT count(*) FROM activity_log) +
            (SELECT count(*) FROM agent_api_keys WHERE revoked_at IS NULL) + (SELECT count(*) FROM heartbeat_runs) AS n`,
  ).first<{ n: number }>();
  return row?.n;
}

describe("cross-company access", () => {
  it("answers 404 on every agent route for another company's agent and writes nothing", async () => {
    const before = await snapshot();
    const callers = [
      ["outsider board user", outsider.headers],
      ["agent of another company", awayOrg.ceo.headers],
    ] as const;
    for (const [who, headers] of callers) {
      for (const [method, path, body] of [...agentRoutes(homeOrg.engineer.id), ...companyRoutes(home.id)]) {
        const res = await call(method, path, { headers, body });
        expect(res.status, `${who}: ${method} ${path} ${JSON.stringify(res.body)}`).toBe(404);
      }
    }
    expect(await snapshot()).toBe(before);
    const state = await call<{ status: string; title: string | null }>(
      "GET",
      `/api/agents/${homeOrg.engineer.id}`,
      {
        headers: owner.headers,
      },
    );
    expect(state.body).toMatchObject({ status: "idle", title: null });
  });

  it("answers 404 for unknown agent ids and 401 without credentials", async () => {
    for (const [method, path, body] of agentRoutes(crypto.randomUUID())) {
      const res = await call(method, path, { headers: owner.headers, body });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    for (const [method, path, body] of [...agentRoutes(homeOrg.engineer.id), ...companyRoutes(home.id)]) {
      const res = await call(method, path, { body });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
    expect((await call("GET", "/api/agents/me")).status).toBe(401);
  });
});
