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
  seedOrg,
} from "../helpers";

type Company = {
  id: string;
  name: string;
  description: string | null;
  status: string;
  issuePrefix: string;
  brandColor: string | null;
  logoAssetId: string | null;
  budgetMonthlyCents: number;
  spentMonthlyCents: number;
  requireBoardApprovalForNewAgents: boolean;
  archivedAt: string | null;
  createdAt: string;
  updatedAt: string;
};

let owner: BoardUser;
let outsider: BoardUser;

beforeAll(async () => {
  owner = await boardUser();
  outsider = await boardUser();
});

const create = (user: BoardUser, body: Record<string, unknown>) =>
  call<Company>("POST", "/api/companies", { body, headers: user.headers });

const companyRow = (id: string) =>
  env.DB.prepare("SELECT * FROM companies WHERE id = ?").bind(id).first<Record<string, unknown>>();

describe("POST /api/companies", () => {
  it("creates the company with defaults, the creator as owner and a company.created row", async () => {
    const res = await create(owner, { name: "Acme Co" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: "Acme Co",
      description: null,
      status: "active",
      issuePrefix: "ACM",
      brandColor: null,
      logoAssetId: null,
      budgetMonthlyCents: 0,
      spentMonthlyCents: 0,
      requireBoardApprovalForNewAgents: true,
      archivedAt: null,
    });
    expect(res.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const membership = await env.DB.prepare(
      "SELECT role FROM company_memberships WHERE company_id = ? AND user_id = ?",
    )
      .bind(res.body.id, owner.userId)
      .first<{ role: string }>();
    expect(membership?.role).toBe("owner");
    expect(await activityOf(res.body.id)).toEqual([
      { action: "company.created", actor_type: "user", actor_id: owner.userId },
    ]);
  });

  it("stores the optional fields", async () => {
    const res = await create(owner, {
      name: "Budgeted",
      description: "Makes things",
      brandColor: "#0F766E",
      budgetMonthlyCents: 50_000,
      requireBoardApprovalForNewAgents: false,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      description: "Makes things",
      brandColor: "#0F766E",
      budgetMonthlyCents: 50_000,
      requireBoardApprovalForNewAgents: false,
    });
    expect((await companyRow(res.body.id))?.require_board_approval_for_new_agents).toBe(0);
  });

  it("appends A to a taken prefix: ZEB, ZEBA, ZEBAA", async () => {
    const prefixes: string[] = [];
    for (const name of ["Zebra One", "zeb-two", "Zeb 3"])
      prefixes.push((await create(owner, { name })).body.issuePrefix);
    expect(prefixes).toEqual(["ZEB", "ZEBA", "ZEBAA"]);
  });

  it("pads short names with X and ignores non-ASCII letters and digits", async () => {
    expect((await create(owner, { name: "Q1" })).body.issuePrefix).toBe("QXX");
    expect((await create(owner, { name: "42" })).body.issuePrefix).toBe("XXX");
    expect((await create(owner, { name: "Ébène Works" })).body.issuePrefix).toBe("BNE");
  });

  it("never fails concurrent creates of the same name: each gets its own prefix", async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, () => create(owner, { name: "Quokka Labs" })),
    );
    expect(results.map((res) => res.status)).toEqual([201, 201, 201, 201, 201, 201]);
    expect(results.map((res) => res.body.issuePrefix).sort()).toEqual([
      "QUO",
      "QUOA",
      "QUOAA",
      "QUOAAA",
      "QUOAAAA",
      "QUOAAAAA",
    ]);
  });

  it("refuses agents with 403 and writes nothing", async () => {
    const company = await seedCompany(owner);
    const { ceo } = await seedOrg(company.id);
    const before = await env.DB.prepare("SELECT count(*) AS n FROM companies").first<{ n: number }>();
    const res = await call("POST", "/api/companies", { body: { name: "Agent Inc" }, headers: ceo.headers });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: "forbidden" });
    const after = await env.DB.prepare("SELECT count(*) AS n FROM companies").first<{ n: number }>();
    expect(after?.n).toBe(before?.n);
  });

  it.each([
    ["no name", {}],
    ["an empty name", { name: "  " }],
    ["a name over 120 characters", { name: "x".repeat(121) }],
    ["an unknown field", { name: "Ok", plan: "pro" }],
    ["a brandColor that is not #RRGGBB", { name: "Ok", brandColor: "red" }],
    ["a negative budget", { name: "Ok", budgetMonthlyCents: -1 }],
    ["a fractional budget", { name: "Ok", budgetMonthlyCents: 1.5 }],
    ["a non-boolean approval flag", { name: "Ok", requireBoardApprovalForNewAgents: "yes" }],
    ["an issuePrefix", { name: "Ok", issuePrefix: "OKK" }],
  ])("answers 400 for %s", async (_label, body) => {
    const res = await create(owner, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: "validation_error" });
  });

  it("answers 400 for malformed JSON and 401 without credentials", async () => {
    const malformed = await call("POST", "/api/companies", {
      rawBody: "{not json",
      headers: { ...owner.headers, "content-type": "application/json" },
    });
    expect(malformed.status).toBe(400);
    expect((await call("POST", "/api/companies", { body: { name: "Anon" } })).status).toBe(401);
  });
});

describe("GET /api/companies and /api/companies/{id}", () => {
  let mine: SeededCompany;
  let theirs: SeededCompany;

  beforeAll(async () => {
    mine = await seedCompany(owner);
    theirs = await seedCompany(outsider);
  });

  it("lists the board user's memberships only", async () => {
    const res = await call<Company[]>("GET", "/api/companies", { headers: outsider.headers });
    expect(res.status).toBe(200);
    expect(res.body.map((company) => company.id)).toEqual([theirs.id]);
    const own = await call<Company[]>("GET", "/api/companies", { headers: owner.headers });
    expect(own.body.map((company) => company.id)).toContain(mine.id);
    expect(own.body.map((company) => company.id)).not.toContain(theirs.id);
  });

  it("lists only its own company to an agent", async () => {
    const agent = await seedAgent(mine.id);
    const res = await call<Company[]>("GET", "/api/companies", { headers: agent.headers });
    expect(res.status).toBe(200);
    expect(res.body.map((company) => company.id)).toEqual([mine.id]);
  });

  it("shows a company to members and its agents", async () => {
    const agent = await seedAgent(mine.id);
    for (const headers of [owner.headers, agent.headers]) {
      const res = await call<Company>("GET", `/api/companies/${mine.id}`, { headers });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: mine.id, name: mine.name, issuePrefix: mine.issuePrefix });
    }
  });

  it("answers 404 for another company exactly like an unknown id", async () => {
    const agent = await seedAgent(mine.id);
    const foreign = await call("GET", `/api/companies/${theirs.id}`, { headers: owner.headers });
    const unknown = await call("GET", `/api/companies/${crypto.randomUUID()}`, { headers: owner.headers });
    const byAgent = await call("GET", `/api/companies/${theirs.id}`, { headers: agent.headers });
    for (const res of [foreign, unknown, byAgent]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Company not found", code: "not_found" });
    }
  });
});

describe("PATCH /api/companies/{id}", () => {
  let company: SeededCompany;
  let org: Awaited<ReturnType<typeof seedOrg>>;

  beforeAll(async () => {
    company = await seedCompany(owner);
    org = await seedOrg(company.id);
  });

  const patch = (headers: Record<string, string>, body: unknown, id = company.id) =>
    call<Company>("PATCH", `/api/companies/${id}`, { body, headers });

  it("answers 422 to anyone sending issuePrefix, and changes nothing", async () => {
    for (const headers of [owner.headers, org.ceo.headers]) {
      const res = await patch(headers, { issuePrefix: "NEW", name: "Renamed" });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ error: "issuePrefix is immutable", code: "unprocessable" });
    }
    expect(await companyRow(company.id)).toMatchObject({
      issue_prefix: company.issuePrefix,
      name: company.name,
    });
  });

  it("lets the CEO agent change branding and records it as the agent", async () => {
    const res = await patch(org.ceo.headers, {
      name: "CEO Renamed",
      description: "New",
      brandColor: "#112233",
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: "CEO Renamed", description: "New", brandColor: "#112233" });
    expect(await activityOf(company.id)).toContainEqual({
      action: "company.updated",
      actor_type: "agent",
      actor_id: org.ceo.id,
    });
    const row = await env.DB.prepare(
      "SELECT details FROM activity_log WHERE entity_id = ? AND action = 'company.updated' ORDER BY created_at DESC",
    )
      .bind(company.id)
      .first<{ details: string }>();
    expect(JSON.parse(row?.details ?? "{}")).toMatchObject({
      changedKeys: ["name", "description", "brandColor"],
      changes: { name: { to: "CEO Renamed" } },
    });
  });

  it("refuses branding changes by a non-CEO agent with 403", async () => {
    for (const agent of [org.manager, org.engineer]) {
      const res = await patch(agent.headers, { name: "Hijacked" });
      expect(res.status).toBe(403);
    }
    expect((await companyRow(company.id))?.name).toBe("CEO Renamed");
  });

  it.each([
    { budgetMonthlyCents: 1 },
    { spentMonthlyCents: 0 },
    { status: "paused" },
    { requireBoardApprovalForNewAgents: false },
  ])("refuses the board-only field %o to the CEO agent with 403", async (body) => {
    const res = await patch(org.ceo.headers, body);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: "forbidden" });
  });

  it("lets a board member change budget, status and the approval policy", async () => {
    const res = await patch(owner.headers, {
      budgetMonthlyCents: 10_000,
      spentMonthlyCents: 250,
      requireBoardApprovalForNewAgents: false,
      status: "paused",
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      budgetMonthlyCents: 10_000,
      spentMonthlyCents: 250,
      requireBoardApprovalForNewAgents: false,
      status: "paused",
    });
    expect(await companyRow(company.id)).toMatchObject({ budget_monthly_cents: 10_000, status: "paused" });
    expect((await patch(owner.headers, { status: "active" })).body.status).toBe("active");
  });

  it("writes no activity when nothing changes", async () => {
    const before = (await activityOf(company.id)).length;
    const res = await patch(owner.headers, { budgetMonthlyCents: 10_000 });
    expect(res.status).toBe(200);
    expect((await activityOf(company.id)).length).toBe(before);
  });

  it("answers 422 for a logoAssetId that is not an asset of this company", async () => {
    const other = await seedCompany(owner);
    const assetId = crypto.randomUUID();
    await env.DB.prepare(
      `INSERT INTO company_assets (id, company_id, kind, content_type, byte_size, r2_key, created_at)
       VALUES (?, ?, 'logo', 'image/png', 1, 'x', ?)`,
    )
      .bind(assetId, other.id, Date.now())
      .run();
    for (const id of [assetId, crypto.randomUUID()]) {
      const res = await patch(owner.headers, { logoAssetId: id });
      expect(res.status).toBe(422);
    }
    expect((await patch(owner.headers, { logoAssetId: null })).status).toBe(200);
  });

  it("answers 400 for unknown fields and wrong types, 404 for non-members", async () => {
    expect((await patch(owner.headers, { plan: "pro" })).status).toBe(400);
    expect((await patch(owner.headers, { name: 7 })).status).toBe(400);
    expect((await patch(owner.headers, { status: "deleted" })).status).toBe(400);
    expect((await patch(outsider.headers, { name: "Nope" })).status).toBe(404);
    expect((await patch(owner.headers, { name: "Nope" }, crypto.randomUUID())).status).toBe(404);
  });
});

describe("POST /api/companies/{id}/archive", () => {
  it("is board only, sets status and archivedAt, logs once and is idempotent", async () => {
    const company = await seedCompany(owner);
    const { ceo } = await seedOrg(company.id);
    expect(
      (await call("POST", `/api/companies/${company.id}/archive`, { headers: ceo.headers })).status,
    ).toBe(403);
    expect(
      (await call("POST", `/api/companies/${company.id}/archive`, { headers: outsider.headers })).status,
    ).toBe(404);
    const res = await call<Company>("POST", `/api/companies/${company.id}/archive`, {
      headers: owner.headers,
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("archived");
    expect(res.body.archivedAt).toMatch(/^\d{4}-/);
    const again = await call<Company>("POST", `/api/companies/${company.id}/archive`, {
      headers: owner.headers,
    });
    expect(again.body.archivedAt).toBe(res.body.archivedAt);
    expect((await activityOf(company.id)).map((row) => row.action)).toEqual(["company.archived"]);
    expect(await companyRow(company.id)).toMatchObject({ status: "archived" });
  });
});
