import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { activityOf, type BoardUser, type SeededAgent, type SeededCompany, seedTwoTenants } from "../helpers";

type Goal = {
  id: string;
  companyId: string;
  title: string;
  description: string | null;
  level: string;
  status: string;
  parentId: string | null;
  ownerAgentId: string | null;
  createdAt: string;
  updatedAt: string;
};

let owner: BoardUser;
let outsider: BoardUser;
let company: SeededCompany;
let other: SeededCompany;
let agent: SeededAgent;
let foreignAgent: SeededAgent;

beforeAll(async () => {
  ({ owner, outsider, company, other, agent, foreignAgent } = await seedTwoTenants());
});

const createGoal = (body: Record<string, unknown>, headers = owner.headers, companyId = company.id) =>
  call<Goal>("POST", `/api/companies/${companyId}/goals`, { body, headers });
const patchGoal = (id: string, body: unknown, headers = owner.headers) =>
  call<Goal>("PATCH", `/api/goals/${id}`, { body, headers });
const goalCount = async () =>
  (
    await env.DB.prepare("SELECT count(*) AS n FROM goals WHERE company_id = ?")
      .bind(company.id)
      .first<{ n: number }>()
  )?.n ?? 0;

describe("POST /api/companies/{id}/goals", () => {
  it("creates a company-level active goal by default and logs goal.created", async () => {
    const res = await createGoal({ title: "Reach 1M users", description: "North star" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      companyId: company.id,
      title: "Reach 1M users",
      description: "North star",
      level: "company",
      status: "active",
      parentId: null,
      ownerAgentId: null,
    });
    expect(await activityOf(res.body.id)).toEqual([
      { action: "goal.created", actor_type: "user", actor_id: owner.userId },
    ]);
  });

  it("defaults a child to the level just below its parent, down to task", async () => {
    const root = (await createGoal({ title: "Root" })).body;
    const team = (await createGoal({ title: "Team", parentId: root.id })).body;
    const byAgent = await createGoal(
      { title: "Agent", parentId: team.id, ownerAgentId: agent.id },
      agent.headers,
    );
    expect(byAgent.status).toBe(201);
    const task = (await createGoal({ title: "Task", parentId: byAgent.body.id, status: "planned" })).body;
    expect([team.level, byAgent.body.level, task.level]).toEqual(["team", "agent", "task"]);
    expect(byAgent.body).toMatchObject({ parentId: team.id, ownerAgentId: agent.id });
    expect(task.status).toBe("planned");
    expect(await activityOf(byAgent.body.id)).toEqual([
      { action: "goal.created", actor_type: "agent", actor_id: agent.id },
    ]);
  });

  it("accepts an explicit level further below the parent, and a parentless team goal", async () => {
    const root = (await createGoal({ title: "Root" })).body;
    expect((await createGoal({ title: "Skip", parentId: root.id, level: "task" })).body.level).toBe("task");
    expect((await createGoal({ title: "Loose", level: "team" })).body).toMatchObject({
      level: "team",
      parentId: null,
    });
  });

  it("answers 422 when the level is not strictly below the parent's, and writes nothing", async () => {
    const team = (await createGoal({ title: "Team", level: "team" })).body;
    const task = (await createGoal({ title: "Task", level: "task" })).body;
    const before = await goalCount();
    for (const body of [
      { title: "Same", parentId: team.id, level: "team" },
      { title: "Above", parentId: team.id, level: "company" },
      { title: "Under a task", parentId: task.id },
    ]) {
      const res = await createGoal(body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body).toMatchObject({ code: "unprocessable" });
    }
    expect(await goalCount()).toBe(before);
  });

  it("answers 422 for a parent or owner of another company", async () => {
    const foreignGoal = (await createGoal({ title: "Theirs" }, outsider.headers, other.id)).body;
    expect((await createGoal({ title: "X", parentId: foreignGoal.id })).status).toBe(422);
    expect((await createGoal({ title: "X", parentId: crypto.randomUUID() })).status).toBe(422);
    expect((await createGoal({ title: "X", ownerAgentId: foreignAgent.id })).status).toBe(422);
  });

  it.each([
    ["no title", {}],
    ["an unknown level", { title: "X", level: "division" }],
    ["an unknown status", { title: "X", status: "done" }],
    ["an unknown field", { title: "X", priority: "high" }],
    ["a numeric title", { title: 3 }],
  ])("answers 400 for %s", async (_label, body) => {
    expect((await createGoal(body)).status).toBe(400);
  });

  it("answers 404 for a company the caller cannot see", async () => {
    expect((await createGoal({ title: "X" }, outsider.headers)).status).toBe(404);
    expect((await createGoal({ title: "X" }, foreignAgent.headers)).status).toBe(404);
  });
});

describe("GET /api/companies/{id}/goals and /api/goals/{id}", () => {
  it("lists the company's goals only, oldest first", async () => {
    const res = await call<Goal[]>("GET", `/api/companies/${company.id}/goals`, { headers: agent.headers });
    expect(res.status).toBe(200);
    expect(res.body.length).toBeGreaterThan(5);
    expect(res.body.every((goal) => goal.companyId === company.id)).toBe(true);
    expect(res.body[0]?.title).toBe("Reach 1M users");
    expect(
      (await call("GET", `/api/companies/${company.id}/goals`, { headers: outsider.headers })).status,
    ).toBe(404);
  });

  it("reads one goal; 404 across companies and for unknown ids", async () => {
    const goal = (await createGoal({ title: "Readable" })).body;
    const res = await call<Goal>("GET", `/api/goals/${goal.id}`, { headers: agent.headers });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(goal);
    for (const headers of [outsider.headers, foreignAgent.headers]) {
      const hidden = await call("GET", `/api/goals/${goal.id}`, { headers });
      expect(hidden.status).toBe(404);
      expect(hidden.body).toEqual({ error: "Goal not found", code: "not_found" });
    }
    expect((await call("GET", `/api/goals/${crypto.randomUUID()}`, { headers: owner.headers })).status).toBe(
      404,
    );
  });
});

describe("PATCH /api/goals/{id}", () => {
  let parent: Goal;
  let child: Goal;

  beforeAll(async () => {
    parent = (await createGoal({ title: "Parent", level: "team" })).body;
    child = (await createGoal({ title: "Child", parentId: parent.id })).body;
  });

  it("updates fields and logs goal.updated with the changed keys", async () => {
    const res = await patchGoal(
      child.id,
      { title: "Child renamed", status: "achieved", ownerAgentId: agent.id, description: "Done it" },
      agent.headers,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      title: "Child renamed",
      status: "achieved",
      ownerAgentId: agent.id,
      level: "agent",
    });
    const row = await env.DB.prepare(
      "SELECT details FROM activity_log WHERE entity_id = ? AND action = 'goal.updated'",
    )
      .bind(child.id)
      .first<{ details: string }>();
    expect(JSON.parse(row?.details ?? "{}").changedKeys).toEqual([
      "title",
      "description",
      "status",
      "ownerAgentId",
    ]);
    expect((await env.DB.prepare("SELECT title FROM goals WHERE id = ?").bind(child.id).first())?.title).toBe(
      "Child renamed",
    );
  });

  it("answers 422 when a level change breaks the rule with the parent or the children", async () => {
    expect((await patchGoal(child.id, { level: "team" })).status).toBe(422);
    expect((await patchGoal(child.id, { level: "company" })).status).toBe(422);
    expect((await patchGoal(parent.id, { level: "agent" })).status).toBe(422);
    expect((await patchGoal(parent.id, { level: "task" })).status).toBe(422);
    expect((await patchGoal(parent.id, { level: "company" })).body.level).toBe("company");
    expect((await patchGoal(child.id, { level: "task" })).body.level).toBe("task");
  });

  it("answers 422 for itself as parent, a parent not above it, or one of another company", async () => {
    expect((await patchGoal(parent.id, { parentId: parent.id })).status).toBe(422);
    expect((await patchGoal(parent.id, { parentId: child.id })).status).toBe(422);
    const foreign = (await createGoal({ title: "Theirs" }, outsider.headers, other.id)).body;
    expect((await patchGoal(child.id, { parentId: foreign.id })).status).toBe(422);
    expect((await patchGoal(child.id, { ownerAgentId: foreignAgent.id })).status).toBe(422);
    const detached = await patchGoal(child.id, { parentId: null });
    expect(detached.status).toBe(200);
    expect(detached.body.parentId).toBeNull();
  });

  it("answers 404 across companies and 400 for bad bodies", async () => {
    expect((await patchGoal(parent.id, { title: "X" }, outsider.headers)).status).toBe(404);
    expect((await patchGoal(parent.id, { title: "X" }, foreignAgent.headers)).status).toBe(404);
    expect((await patchGoal(crypto.randomUUID(), { title: "X" })).status).toBe(404);
    expect((await patchGoal(parent.id, { companyId: other.id })).status).toBe(400);
    expect((await patchGoal(parent.id, { status: "won" })).status).toBe(400);
  });
});
