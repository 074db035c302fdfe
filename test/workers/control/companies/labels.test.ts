import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import {
  activityOf,
  type BoardUser,
  boardUser,
  type SeededCompany,
  seedAgent,
  seedCompany,
} from "../helpers";

type Label = { id: string; companyId: string; name: string; color: string | null; createdAt: string };

let owner: BoardUser;
let outsider: BoardUser;
let company: SeededCompany;
let other: SeededCompany;

beforeAll(async () => {
  owner = await boardUser();
  outsider = await boardUser();
  company = await seedCompany(owner);
  other = await seedCompany(outsider);
});

const createLabel = (body: Record<string, unknown>, headers = owner.headers, companyId = company.id) =>
  call<Label>("POST", `/api/companies/${companyId}/labels`, { body, headers });
const labelCount = async (companyId: string) =>
  (
    await env.DB.prepare("SELECT count(*) AS n FROM labels WHERE company_id = ?")
      .bind(companyId)
      .first<{ n: number }>()
  )?.n ?? 0;

describe("labels", () => {
  it("creates labels (board or agent), logs label.created and lists them by name", async () => {
    const bug = await createLabel({ name: "bug", color: "#DC2626" });
    expect(bug.status).toBe(201);
    expect(bug.body).toMatchObject({ companyId: company.id, name: "bug", color: "#DC2626" });
    const agent = await seedAgent(company.id);
    const chore = await createLabel({ name: "Chore" }, agent.headers);
    expect(chore.status).toBe(201);
    expect(chore.body.color).toBeNull();
    expect(await activityOf(chore.body.id)).toEqual([
      { action: "label.created", actor_type: "agent", actor_id: agent.id },
    ]);
    const list = await call<Label[]>("GET", `/api/companies/${company.id}/labels`, {
      headers: agent.headers,
    });
    expect(list.status).toBe(200);
    expect(list.body.map((label) => label.name)).toEqual(["bug", "Chore"]);
  });

  it("answers 409 for a duplicate name, ignoring case; other companies may reuse it", async () => {
    const before = await labelCount(company.id);
    for (const name of ["bug", "BUG"]) {
      const res = await createLabel({ name });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: "conflict" });
    }
    expect(await labelCount(company.id)).toBe(before);
    expect((await createLabel({ name: "bug" }, outsider.headers, other.id)).status).toBe(201);
  });

  it.each([
    ["no name", {}],
    ["an empty name", { name: " " }],
    ["a bad colour", { name: "x", color: "blue" }],
    ["an unknown field", { name: "x", icon: "star" }],
  ])("answers 400 for %s", async (_label, body) => {
    expect((await createLabel(body)).status).toBe(400);
  });

  it("answers 404 for a company the caller cannot see", async () => {
    expect((await createLabel({ name: "x" }, outsider.headers)).status).toBe(404);
    const foreignAgent = await seedAgent(other.id);
    expect(
      (await call("GET", `/api/companies/${company.id}/labels`, { headers: foreignAgent.headers })).status,
    ).toBe(404);
    expect(
      (await call("GET", `/api/companies/${crypto.randomUUID()}/labels`, { headers: owner.headers })).status,
    ).toBe(404);
  });
});
