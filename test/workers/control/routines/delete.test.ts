// DELETE of routines, projects and goals (board only): what goes with them, what is detached, and
// the 409 while a project still has routines.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { seedIssue } from "../helpers";
import { addTrigger, createRoutine, executionIssues, routineTenant, runRoutine } from "./fixtures";

type ErrorBody = { error: string; details?: Record<string, unknown> };
const remove = (headers: Record<string, string>, path: string) =>
  call<ErrorBody>("DELETE", `/api/${path}`, { headers });
const one = (query: string, id: string) => env.DB.prepare(query).bind(id).first<Record<string, unknown>>();
const actionOf = async (id: string, action: string) =>
  one(`SELECT details FROM activity_log WHERE entity_id = ? AND action = '${action}'`, id);

describe("DELETE /routines/:id", () => {
  it("deletes the routine with its triggers and runs; its issues stay, no longer linked", async () => {
    const tenant = await routineTenant();
    const routine = await createRoutine(tenant);
    await addTrigger(tenant, routine.id, { kind: "api" });
    expect((await runRoutine(tenant, routine.id)).status).toBe(202);
    const [issue] = await executionIssues(routine.id);
    expect(issue).toBeDefined();
    expect((await remove(tenant.agent.headers, `routines/${routine.id}`)).status).toBe(403);
    expect((await remove(tenant.board.headers, `routines/${routine.id}`)).status).toBe(204);
    expect(await one("SELECT id FROM routines WHERE id = ?", routine.id)).toBeNull();
    expect(await one("SELECT id FROM routine_triggers WHERE routine_id = ?", routine.id)).toBeNull();
    expect(await one("SELECT id FROM routine_runs WHERE routine_id = ?", routine.id)).toBeNull();
    expect(await one("SELECT origin_routine_id FROM issues WHERE id = ?", issue?.id ?? "")).toEqual({
      origin_routine_id: null,
    });
    expect(await actionOf(routine.id, "routine.deleted")).not.toBeNull();
    expect((await call("GET", `/api/routines/${routine.id}`, { headers: tenant.board.headers })).status).toBe(
      404,
    );
    expect((await remove(tenant.board.headers, `routines/${routine.id}`)).status).toBe(404);
  });
});

describe("DELETE /projects/:id", () => {
  it("is 409 while routines use it, then deletes it and unfiles its issues", async () => {
    const tenant = await routineTenant();
    const routine = await createRoutine(tenant);
    const issue = await seedIssue(tenant.company);
    await env.DB.prepare("UPDATE issues SET project_id = ? WHERE id = ?")
      .bind(tenant.projectId, issue.id)
      .run();
    const busy = await remove(tenant.board.headers, `projects/${tenant.projectId}`);
    expect(busy.status).toBe(409);
    expect(busy.body.details).toMatchObject({ routineIds: [routine.id] });
    expect(busy.body.error).toBe(
      'Routines still use this project, move or delete them first: "Daily triage"',
    );
    expect((await remove(tenant.board.headers, `routines/${routine.id}`)).status).toBe(204);
    expect((await remove(tenant.agent.headers, `projects/${tenant.projectId}`)).status).toBe(403);
    expect((await remove(tenant.board.headers, `projects/${tenant.projectId}`)).status).toBe(204);
    expect(await one("SELECT id FROM projects WHERE id = ?", tenant.projectId)).toBeNull();
    expect(await one("SELECT project_id FROM issues WHERE id = ?", issue.id)).toEqual({ project_id: null });
    expect(await actionOf(tenant.projectId, "project.deleted")).not.toBeNull();
    const other = await routineTenant();
    expect((await remove(other.board.headers, `projects/${tenant.projectId}`)).status).toBe(404);
    expect((await remove(tenant.board.headers, `projects/${other.projectId}`)).status).toBe(404);
    expect(await one("SELECT id FROM projects WHERE id = ?", other.projectId)).not.toBeNull();
  });
});

describe("DELETE /goals/:id", () => {
  it("moves sub-goals up and detaches projects and issues", async () => {
    const tenant = await routineTenant();
    const create = async (body: Record<string, unknown>) => {
      const res = await call<{ id: string }>("POST", `/api/companies/${tenant.company.id}/goals`, {
        headers: tenant.board.headers,
        body,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id;
    };
    const top = await create({ title: "Top" });
    const middle = await create({ title: "Middle", parentId: top });
    const leaf = await create({ title: "Leaf", parentId: middle });
    const issue = await seedIssue(tenant.company);
    await env.DB.batch([
      env.DB.prepare("UPDATE issues SET goal_id = ? WHERE id = ?").bind(middle, issue.id),
      env.DB.prepare("UPDATE projects SET goal_id = ? WHERE id = ?").bind(middle, tenant.projectId),
      env.DB.prepare("INSERT INTO project_goals (project_id, goal_id, company_id) VALUES (?, ?, ?)").bind(
        tenant.projectId,
        middle,
        tenant.company.id,
      ),
    ]);
    expect((await remove(tenant.agent.headers, `goals/${middle}`)).status).toBe(403);
    expect((await remove(tenant.board.headers, `goals/${middle}`)).status).toBe(204);
    expect(await one("SELECT id FROM goals WHERE id = ?", middle)).toBeNull();
    expect(await one("SELECT parent_id FROM goals WHERE id = ?", leaf)).toEqual({ parent_id: top });
    expect(await one("SELECT goal_id FROM issues WHERE id = ?", issue.id)).toEqual({ goal_id: null });
    expect(await one("SELECT goal_id FROM projects WHERE id = ?", tenant.projectId)).toEqual({
      goal_id: null,
    });
    expect(await one("SELECT goal_id FROM project_goals WHERE project_id = ?", tenant.projectId)).toBeNull();
    expect(await actionOf(middle, "goal.deleted")).not.toBeNull();
    const other = await routineTenant();
    expect((await remove(other.board.headers, `goals/${top}`)).status).toBe(404);
  });
});
