import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../../helpers";
import {
  activityOf,
  type BoardUser,
  type SeededAgent,
  type SeededCompany,
  seedCompany,
  seedGoal,
  seedTwoTenants,
} from "../helpers";

type Workspace = {
  id: string;
  projectId: string;
  companyId: string;
  name: string;
  cwd: string | null;
  repoUrl: string | null;
  repoRef: string | null;
  isPrimary: boolean;
};
type Project = {
  id: string;
  companyId: string;
  name: string;
  description: string | null;
  status: string;
  goalId: string | null;
  goalIds: string[];
  leadAgentId: string | null;
  primaryWorkspace: Workspace | null;
  workspaces: Workspace[];
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

const createProject = (body: Record<string, unknown>, headers = owner.headers, companyId = company.id) =>
  call<Project>("POST", `/api/companies/${companyId}/projects`, { body, headers });

const projectCount = async (companyId: string) =>
  (
    await env.DB.prepare("SELECT count(*) AS n FROM projects WHERE company_id = ?")
      .bind(companyId)
      .first<{ n: number }>()
  )?.n ?? 0;

describe("projects", () => {
  it("creates a project with defaults and logs project.created", async () => {
    const res = await createProject({ name: "Website" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      companyId: company.id,
      name: "Website",
      description: null,
      status: "active",
      goalId: null,
      goalIds: [],
      leadAgentId: null,
      primaryWorkspace: null,
      workspaces: [],
    });
    expect(await activityOf(res.body.id)).toEqual([
      { action: "project.created", actor_type: "user", actor_id: owner.userId },
    ]);
  });

  it("links goals (the first is goalId) and makes the inline workspace primary", async () => {
    const [first, second] = [await seedGoal(company.id), await seedGoal(company.id)];
    const res = await createProject({
      name: "App",
      description: "Mobile app",
      status: "planned",
      goalIds: [first, second],
      leadAgentId: agent.id,
      workspace: { repoUrl: "https://github.com/acme/app.git", repoRef: "main", isPrimary: false },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: "planned",
      goalId: first,
      goalIds: [first, second],
      leadAgentId: agent.id,
    });
    expect(res.body.workspaces).toHaveLength(1);
    expect(res.body.primaryWorkspace).toMatchObject({
      name: "app",
      repoUrl: "https://github.com/acme/app.git",
      repoRef: "main",
      cwd: null,
      isPrimary: true,
    });
    const links = await env.DB.prepare("SELECT goal_id FROM project_goals WHERE project_id = ?")
      .bind(res.body.id)
      .all<{ goal_id: string }>();
    expect(links.results.map((row) => row.goal_id).sort()).toEqual([first, second].sort());
    expect((await activityOf(res.body.id)).map((row) => row.action)).toEqual([
      "project.created",
      "project.workspace_created",
    ]);
  });

  it("lets the company's agents create projects", async () => {
    const res = await createProject({ name: "By agent", goalId: await seedGoal(company.id) }, agent.headers);
    expect(res.status).toBe(201);
    expect(res.body.goalIds).toEqual([res.body.goalId]);
    expect(await activityOf(res.body.id)).toEqual([
      { action: "project.created", actor_type: "agent", actor_id: agent.id },
    ]);
  });

  it("answers 422 for goals or a lead of another company, and for a workspace without location; writes nothing", async () => {
    const before = await projectCount(company.id);
    const foreignGoal = await seedGoal(other.id);
    const bad = [
      { name: "X", goalIds: [foreignGoal] },
      { name: "X", goalIds: [crypto.randomUUID()] },
      { name: "X", goalId: foreignGoal },
      { name: "X", leadAgentId: foreignAgent.id },
      { name: "X", workspace: { name: "nowhere", repoRef: "main" } },
    ];
    for (const body of bad) {
      const res = await createProject(body);
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
    expect(await projectCount(company.id)).toBe(before);
  });

  it.each([
    ["no name", {}],
    ["an unknown status", { name: "X", status: "archived" }],
    ["an unknown field", { name: "X", owner: "me" }],
    ["an unknown workspace field", { name: "X", workspace: { cwd: "/a", path: "/b" } }],
    ["goalIds that is not an array", { name: "X", goalIds: "abc" }],
    ["goalIds and goalId together", { name: "X", goalIds: [], goalId: null }],
  ])("answers 400 for %s", async (_label, body) => {
    expect((await createProject(body)).status).toBe(400);
  });

  it("answers 404 for a company the caller cannot see", async () => {
    expect((await createProject({ name: "X" }, outsider.headers)).status).toBe(404);
    expect((await createProject({ name: "X" }, foreignAgent.headers)).status).toBe(404);
    expect(
      (await call("GET", `/api/companies/${company.id}/projects`, { headers: outsider.headers })).status,
    ).toBe(404);
  });

  it("lists the company's projects with their workspaces", async () => {
    const res = await call<Project[]>("GET", `/api/companies/${company.id}/projects`, {
      headers: agent.headers,
    });
    expect(res.status).toBe(200);
    expect(res.body.map((project) => project.name)).toEqual(["Website", "App", "By agent"]);
    expect(res.body[1]?.primaryWorkspace?.isPrimary).toBe(true);
    const theirs = await call<Project[]>("GET", `/api/companies/${other.id}/projects`, {
      headers: outsider.headers,
    });
    expect(theirs.body).toEqual([]);
  });

  it("reads and updates one project; 404 across companies", async () => {
    const project = (await createProject({ name: "Patch me" })).body;
    const got = await call<Project>("GET", `/api/projects/${project.id}`, { headers: agent.headers });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(project);

    const goal = await seedGoal(company.id);
    const res = await call<Project>("PATCH", `/api/projects/${project.id}`, {
      body: { name: "Patched", status: "paused", goalIds: [goal], description: "Now described" },
      headers: agent.headers,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: "Patched", status: "paused", goalId: goal, goalIds: [goal] });
    const log = await env.DB.prepare(
      "SELECT details FROM activity_log WHERE entity_id = ? AND action = 'project.updated'",
    )
      .bind(project.id)
      .first<{ details: string }>();
    expect(JSON.parse(log?.details ?? "{}").changedKeys).toEqual([
      "name",
      "description",
      "status",
      "goalIds",
    ]);

    const cleared = await call<Project>("PATCH", `/api/projects/${project.id}`, {
      body: { goalId: null },
      headers: owner.headers,
    });
    expect(cleared.body).toMatchObject({ goalId: null, goalIds: [] });

    for (const headers of [outsider.headers, foreignAgent.headers]) {
      expect((await call("GET", `/api/projects/${project.id}`, { headers })).status).toBe(404);
      expect(
        (await call("PATCH", `/api/projects/${project.id}`, { body: { name: "Z" }, headers })).status,
      ).toBe(404);
    }
    expect(
      (await call("GET", `/api/projects/${crypto.randomUUID()}`, { headers: owner.headers })).status,
    ).toBe(404);
    const patch = (body: unknown) =>
      call("PATCH", `/api/projects/${project.id}`, { body, headers: owner.headers });
    expect((await patch({ goalIds: [await seedGoal(other.id)] })).status).toBe(422);
    expect((await patch({ leadAgentId: foreignAgent.id })).status).toBe(422);
    expect((await patch({ status: "done" })).status).toBe(400);
    expect((await patch({ workspaces: [] })).status).toBe(400);
  });
});

describe("projects at scale (D1 allows 100 bound parameters per statement)", () => {
  it("links 50 goals in one create and lists more than 100 projects", async () => {
    const scaled = await seedCompany(owner);
    const now = Date.now();
    const goalIds = Array.from({ length: 50 }, () => crypto.randomUUID());
    await env.DB.batch(
      goalIds.map((id) =>
        env.DB.prepare(
          `INSERT INTO goals (id, company_id, title, level, status, created_at, updated_at)
           VALUES (?, ?, 'g', 'company', 'active', ?, ?)`,
        ).bind(id, scaled.id, now, now),
      ),
    );
    const res = await createProject({ name: "Many goals", goalIds }, owner.headers, scaled.id);
    expect(res.status).toBe(201);
    expect(res.body.goalIds).toEqual(goalIds);
    await env.DB.batch(
      Array.from({ length: 105 }, (_, i) =>
        env.DB.prepare(
          `INSERT INTO projects (id, company_id, name, status, created_at, updated_at)
           VALUES (?, ?, ?, 'active', ?, ?)`,
        ).bind(crypto.randomUUID(), scaled.id, `P${i}`, now + i + 1, now + i + 1),
      ),
    );
    const list = await call<Project[]>("GET", `/api/companies/${scaled.id}/projects`, {
      headers: owner.headers,
    });
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(106);
    expect(list.body.find((project) => project.id === res.body.id)?.goalIds).toEqual(goalIds);
  });
});

describe("workspaces", () => {
  let project: Project;
  const base = () => `/api/projects/${project.id}/workspaces`;
  const add = (body: Record<string, unknown>, headers = owner.headers) =>
    call<Workspace>("POST", base(), { body, headers });
  const list = async () => (await call<Workspace[]>("GET", base(), { headers: owner.headers })).body;
  const primaryIds = async () => (await list()).filter((w) => w.isPrimary).map((w) => w.id);

  beforeAll(async () => {
    project = (await createProject({ name: "Workspaces" })).body;
  });

  it("makes the first workspace primary and later ones not", async () => {
    const first = await add({ cwd: "/srv/site/" }, agent.headers);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ name: "site", cwd: "/srv/site/", repoUrl: null, isPrimary: true });
    const second = await add({ name: "Mirror", repoUrl: "git@github.com:acme/mirror.git" });
    expect(second.status).toBe(201);
    expect(second.body.isPrimary).toBe(false);
    expect(await primaryIds()).toEqual([first.body.id]);
    const detail = await call<Project>("GET", `/api/projects/${project.id}`, { headers: owner.headers });
    expect(detail.body.primaryWorkspace?.id).toBe(first.body.id);
    expect(detail.body.workspaces.map((w) => w.id)).toEqual([first.body.id, second.body.id]);
    expect(
      (await activityOf(project.id)).filter((row) => row.action === "project.workspace_created"),
    ).toHaveLength(2);
  });

  it("demotes the current primary when a new one asks to be primary", async () => {
    const third = await add({ cwd: "/srv/third", isPrimary: true });
    expect(third.body.isPrimary).toBe(true);
    expect(await primaryIds()).toEqual([third.body.id]);
  });

  it("promotes with PATCH isPrimary true and refuses to unset the primary", async () => {
    const [first] = await list();
    if (!first) throw new Error("no workspace");
    const res = await call<Workspace>("PATCH", `${base()}/${first.id}`, {
      body: { isPrimary: true, repoRef: "develop" },
      headers: agent.headers,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ isPrimary: true, repoRef: "develop" });
    expect(await primaryIds()).toEqual([first.id]);
    const unset = await call("PATCH", `${base()}/${first.id}`, {
      body: { isPrimary: false },
      headers: owner.headers,
    });
    expect(unset.status).toBe(422);
    expect(await primaryIds()).toEqual([first.id]);
  });

  it("answers 422 for a workspace without cwd and repoUrl, on create and on PATCH", async () => {
    expect((await add({ name: "empty" })).status).toBe(422);
    expect((await add({ cwd: null, repoUrl: null })).status).toBe(422);
    const [first] = await list();
    const res = await call("PATCH", `${base()}/${first?.id}`, {
      body: { cwd: null },
      headers: owner.headers,
    });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: "A workspace needs at least one of cwd or repoUrl" });
    expect((await list())[0]?.cwd).toBe("/srv/site/");
    const swap = await call<Workspace>("PATCH", `${base()}/${first?.id}`, {
      body: { cwd: null, repoUrl: "https://example.test/site.git" },
      headers: owner.headers,
    });
    expect(swap.status).toBe(200);
    expect(swap.body).toMatchObject({ cwd: null, repoUrl: "https://example.test/site.git" });
  });

  it("promotes the oldest remaining workspace when the primary is deleted", async () => {
    const before = await list();
    const primary = before.find((w) => w.isPrimary);
    const res = await call<Workspace>("DELETE", `${base()}/${primary?.id}`, { headers: agent.headers });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(primary?.id);
    const after = await list();
    expect(after.map((w) => w.id)).toEqual(before.filter((w) => w.id !== primary?.id).map((w) => w.id));
    expect(await primaryIds()).toEqual([after[0]?.id]);
    expect((await activityOf(project.id)).map((row) => row.action)).toContain("project.workspace_deleted");
  });

  it("keeps the primary when another workspace is deleted, and none is left after the last", async () => {
    const [primary, rest] = [await primaryIds(), (await list()).filter((w) => !w.isPrimary)];
    for (const w of rest)
      expect((await call("DELETE", `${base()}/${w.id}`, { headers: owner.headers })).status).toBe(200);
    expect(await primaryIds()).toEqual(primary);
    expect((await call("DELETE", `${base()}/${primary[0]}`, { headers: owner.headers })).status).toBe(200);
    expect(await list()).toEqual([]);
    const again = await add({ cwd: "/again" });
    expect(again.body.isPrimary).toBe(true);
  });

  it("promotes nobody when a non-primary is deleted while a newer workspace is primary", async () => {
    const fresh = (await createProject({ name: "Order" })).body;
    const url = `/api/projects/${fresh.id}/workspaces`;
    const made: Workspace[] = [];
    for (const body of [{ cwd: "/a" }, { cwd: "/b" }, { cwd: "/c", isPrimary: true }]) {
      made.push((await call<Workspace>("POST", url, { body, headers: owner.headers })).body);
    }
    const [first, second, third] = made;
    expect((await call("DELETE", `${url}/${second?.id}`, { headers: owner.headers })).status).toBe(200);
    const left = (await call<Workspace[]>("GET", url, { headers: owner.headers })).body;
    expect(left.map((w) => [w.id, w.isPrimary])).toEqual([
      [first?.id, false],
      [third?.id, true],
    ]);
  });

  it("answers 404 across projects and companies, and for unknown ids", async () => {
    const workspace = (await list())[0] as Workspace;
    const otherProject = (await createProject({ name: "Other" })).body;
    const foreignProject = (await createProject({ name: "Theirs" }, outsider.headers, other.id)).body;
    const attempts = [
      call("GET", base(), { headers: outsider.headers }),
      call("POST", base(), { body: { cwd: "/x" }, headers: foreignAgent.headers }),
      call("PATCH", `${base()}/${workspace.id}`, { body: { name: "x" }, headers: outsider.headers }),
      call("DELETE", `${base()}/${workspace.id}`, { headers: foreignAgent.headers }),
      call("PATCH", `/api/projects/${otherProject.id}/workspaces/${workspace.id}`, {
        body: { name: "x" },
        headers: owner.headers,
      }),
      call("DELETE", `/api/projects/${otherProject.id}/workspaces/${workspace.id}`, {
        headers: owner.headers,
      }),
      call("GET", `/api/projects/${foreignProject.id}/workspaces`, { headers: owner.headers }),
      call("DELETE", `${base()}/${crypto.randomUUID()}`, { headers: owner.headers }),
      call("GET", `/api/projects/${crypto.randomUUID()}/workspaces`, { headers: owner.headers }),
    ];
    for (const res of await Promise.all(attempts)) expect(res.status).toBe(404);
    expect((await list()).map((w) => w.id)).toEqual([workspace.id]);
  });

  it("answers 400 for unknown fields and wrong types", async () => {
    expect((await add({ cwd: "/x", branch: "main" })).status).toBe(400);
    expect((await add({ cwd: 5 })).status).toBe(400);
    expect((await add({ cwd: "" })).status).toBe(400);
  });
});
