import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { activityOf, type BoardUser, boardUser, type SeededCompany, seedCompany, seedOrg } from "../helpers";

// Company skills (import, list), agents' desired skills (create, sync) and the adapter model catalogue.

type Json = Record<string, unknown>;
type Org = Awaited<ReturnType<typeof seedOrg>>;

let board: BoardUser;
let company: SeededCompany;
let org: Org;
let imported: Json[];

beforeAll(async () => {
  board = await boardUser();
  company = await seedCompany(board, { requireBoardApprovalForNewAgents: false });
  org = await seedOrg(company.id);
  const res = await call<Json[]>("POST", `/api/companies/${company.id}/skills/import`, {
    headers: board.headers,
    body: {
      skills: [
        { name: "Code Review!", description: "Reviews diffs", content: "# Review" },
        { name: "Release notes", slug: "release" },
        { name: "Review (security)", slug: "code-review", namespace: "security" },
      ],
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  imported = res.body;
});

describe("skills import and list", () => {
  it("derives slugs, builds canonical keys and lists the skills", async () => {
    expect(imported.map((skill) => skill.key)).toEqual([
      "company/code-review",
      "company/release",
      "security/code-review",
    ]);
    expect(imported[0]).toMatchObject({
      slug: "code-review",
      name: "Code Review!",
      content: "# Review",
      source: "import",
    });
    const list = await call<Json[]>("GET", `/api/companies/${company.id}/skills`, {
      headers: org.engineer.headers,
    });
    expect(list.status).toBe(200);
    expect(list.body.map((skill) => skill.key)).toEqual([
      "company/code-review",
      "company/release",
      "security/code-review",
    ]);
    expect((await activityOf(imported[0]?.id as string)).map((entry) => entry.action)).toEqual([
      "skill.imported",
    ]);
  });

  it("updates an existing key in place (same id)", async () => {
    const res = await call<Json[]>("POST", `/api/companies/${company.id}/skills/import`, {
      headers: org.ceo.headers,
      body: { skills: [{ name: "Release notes v2", slug: "release", content: "# v2" }] },
    });
    expect(res.status).toBe(201);
    expect(res.body[0]).toMatchObject({
      id: imported[1]?.id,
      key: "company/release",
      name: "Release notes v2",
    });
    const count = await env.DB.prepare("SELECT count(*) AS n FROM company_skills WHERE company_id = ?")
      .bind(company.id)
      .first<{ n: number }>();
    expect(count?.n).toBe(3);
  });

  it("refuses agents other than the CEO (403), duplicate keys and bad bodies (400), unsluggable names (422)", async () => {
    const path = `/api/companies/${company.id}/skills/import`;
    expect(
      (await call("POST", path, { headers: org.manager.headers, body: { skills: [{ name: "X" }] } })).status,
    ).toBe(403);
    const dup = { skills: [{ name: "Dup" }, { name: "dup" }] };
    expect((await call("POST", path, { headers: board.headers, body: dup })).status).toBe(400);
    expect((await call("POST", path, { headers: board.headers, body: { skills: [] } })).status).toBe(400);
    expect(
      (
        await call("POST", path, {
          headers: board.headers,
          body: { skills: [{ name: "A", slug: "Bad Slug" }] },
        })
      ).status,
    ).toBe(400);
    expect(
      (await call("POST", path, { headers: board.headers, body: { skills: [{ name: "!!!" }] } })).status,
    ).toBe(422);
  });
});

describe("desired skills", () => {
  it("stores ids, keys and unique slugs as canonical keys on create", async () => {
    const res = await call<Json>("POST", `/api/companies/${company.id}/agents`, {
      headers: board.headers,
      body: {
        name: `Skilled ${crypto.randomUUID().slice(0, 6)}`,
        adapterType: "coder_local",
        desiredSkills: [imported[2]?.id, "company/code-review", "release", "release"],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.desiredSkills).toEqual([
      "security/code-review",
      "company/code-review",
      "company/release",
    ]);
  });

  it("rejects an ambiguous slug with 422 naming the candidates", async () => {
    const res = await call<Json>("POST", `/api/agents/${org.engineer.id}/skills/sync`, {
      headers: org.engineer.headers,
      body: { desiredSkills: ["code-review"] },
    });
    expect(res.status).toBe(422);
    expect(res.body.details).toMatchObject({
      ambiguous: [{ ref: "code-review", matches: ["company/code-review", "security/code-review"] }],
    });
  });

  it("sync stores canonical keys, writes a skills_sync revision and logs agent.skills_synced", async () => {
    const res = await call<{ desiredSkills: string[]; skills: Json[] }>(
      "POST",
      `/api/agents/${org.engineer.id}/skills/sync`,
      { headers: org.manager.headers, body: { desiredSkills: ["release", "security/code-review"] } },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.desiredSkills).toEqual(["company/release", "security/code-review"]);
    expect(res.body.skills.map((skill) => skill.name)).toEqual(["Release notes v2", "Review (security)"]);
    const agent = await call<Json>("GET", `/api/agents/${org.engineer.id}`, { headers: board.headers });
    expect(agent.body.desiredSkills).toEqual(["company/release", "security/code-review"]);
    const revisions = await call<Json[]>("GET", `/api/agents/${org.engineer.id}/config-revisions`, {
      headers: board.headers,
    });
    expect(revisions.body[0]).toMatchObject({ source: "skills_sync", changedKeys: ["desiredSkills"] });
    expect((await activityOf(org.engineer.id)).map((entry) => entry.action)).toEqual(["agent.skills_synced"]);
    const peer = await call("POST", `/api/agents/${org.engineer.id}/skills/sync`, {
      headers: org.peer.headers,
      body: { desiredSkills: [] },
    });
    expect(peer.status).toBe(403);
  });
});

describe("GET /companies/:companyId/adapters/:adapterType/models", () => {
  it("lists models of each adapter type with one default, 404 for unknown types", async () => {
    for (const type of ["coder_local", "assistant_local"]) {
      const res = await call<Json[]>("GET", `/api/companies/${company.id}/adapters/${type}/models`, {
        headers: org.engineer.headers,
      });
      expect(res.status).toBe(200);
      expect(res.body.length).toBeGreaterThan(0);
      expect(res.body.every((model) => typeof model.id === "string" && typeof model.label === "string")).toBe(
        true,
      );
      expect(res.body.filter((model) => model.default === true)).toHaveLength(1);
    }
    const unknown = await call("GET", `/api/companies/${company.id}/adapters/remote_http/models`, {
      headers: board.headers,
    });
    expect(unknown.status).toBe(404);
  });
});
