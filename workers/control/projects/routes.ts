import { createRoute, z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { refOf } from "../../core/actor";
import { newId } from "../../db/client";
import { type ProjectRow, projects } from "../../db/schema";
import { notFound } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { CompanyParamSchema } from "../companies";

import { activityInsert, companyForActor, controlContext } from "../shared";
import { projectDeleteRoutes } from "./delete";
import {
  CreateProjectBodySchema,
  ProjectParamSchema,
  ProjectSchema,
  UpdateProjectBodySchema,
} from "./schemas";
import {
  assertProjectRefs,
  goalLinkStatements,
  listProjects,
  renderProject,
  renderProjects,
  requestedGoalIds,
  visibleProject,
} from "./store";
import { workspaceInsertStatements, workspaceRoutes } from "./workspaces";

/** Projects of a company, with their goals and workspaces. Board users and the company's agents may write. */
export const projectRoutes = createRouter();
const tags = ["Projects"];

const refsError = controlError(
  "goalIds, goalId or leadAgentId not of this company; a workspace without cwd or repoUrl",
);

projectRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/projects",
    tags,
    summary: "The company's projects, oldest first",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(z.array(ProjectSchema), "Projects"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    return c.json(await renderProjects(db, await listProjects(db, company.id)), 200);
  },
);

projectRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/projects",
    tags,
    summary: "Create a project, optionally with goals and an inline (primary) workspace",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(CreateProjectBodySchema) },
    responses: { 201: json(ProjectSchema, "Created"), ...controlErrors, 422: refsError },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const body = c.req.valid("json");
    const goalIds = requestedGoalIds(body) ?? [];
    await assertProjectRefs(db, company.id, { goalIds, leadAgentId: body.leadAgentId });
    const now = Date.now();
    const row: ProjectRow = {
      id: newId(),
      companyId: company.id,
      name: body.name,
      description: body.description ?? null,
      status: body.status ?? "active",
      goalId: goalIds[0] ?? null,
      leadAgentId: body.leadAgentId ?? null,
      archivedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    // The project's first workspace: primary whatever isPrimary says.
    const workspace = body.workspace
      ? workspaceInsertStatements(db, actor, row, { ...body.workspace, isPrimary: true }, now)
      : undefined;
    await db.batch([
      db.insert(projects).values(row),
      ...goalLinkStatements(db, row, goalIds),
      activityInsert(
        db,
        {
          companyId: company.id,
          actor: refOf(actor),
          action: "project.created",
          entityType: "project",
          entityId: row.id,
          details: { name: row.name, goalIds, workspaceId: workspace?.id ?? null },
        },
        now,
      ),
      ...(workspace?.statements ?? []),
    ]);
    return c.json(await renderProject(db, row), 201);
  },
);

projectRoutes.openapi(
  createRoute({
    method: "get",
    path: "/projects/{projectId}",
    tags,
    summary: "One project with goalIds, primaryWorkspace and workspaces",
    security: controlAuth,
    request: { params: ProjectParamSchema },
    responses: { 200: json(ProjectSchema, "The project"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const row = await visibleProject(db, actor, c.req.valid("param").projectId);
    return c.json(await renderProject(db, row), 200);
  },
);

projectRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/projects/{projectId}",
    tags,
    summary: "Update a project; goalIds (or goalId) replaces its goals",
    security: controlAuth,
    request: { params: ProjectParamSchema, ...jsonBody(UpdateProjectBodySchema) },
    responses: { 200: json(ProjectSchema, "Updated"), ...controlErrors, 422: refsError },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const row = await visibleProject(db, actor, c.req.valid("param").projectId);
    const body = c.req.valid("json");
    const goalIds = requestedGoalIds(body);
    await assertProjectRefs(db, row.companyId, { goalIds, leadAgentId: body.leadAgentId });
    const current = await renderProject(db, row);
    const patch: Partial<ProjectRow> = {};
    if (body.name !== undefined && body.name !== row.name) patch.name = body.name;
    if (body.description !== undefined && body.description !== row.description) {
      patch.description = body.description;
    }
    if (body.status !== undefined && body.status !== row.status) patch.status = body.status;
    if (body.leadAgentId !== undefined && body.leadAgentId !== row.leadAgentId) {
      patch.leadAgentId = body.leadAgentId;
    }
    const goalsChanged = goalIds !== undefined && goalIds.join() !== current.goalIds.join();
    if (goalsChanged) patch.goalId = goalIds[0] ?? null;
    const changedKeys = [
      ...Object.keys(patch).filter((key) => key !== "goalId"),
      ...(goalsChanged ? ["goalIds"] : []),
    ];
    if (changedKeys.length === 0) return c.json(current, 200);
    const now = Date.now();
    const [[updated]] = await db.batch([
      db
        .update(projects)
        .set({ ...patch, updatedAt: now })
        .where(eq(projects.id, row.id))
        .returning(),
      ...(goalsChanged ? goalLinkStatements(db, row, goalIds) : []),
      activityInsert(
        db,
        {
          companyId: row.companyId,
          actor: refOf(actor),
          action: "project.updated",
          entityType: "project",
          entityId: row.id,
          details: { changedKeys, ...(goalsChanged ? { goalIds } : {}) },
        },
        now,
      ),
    ]);
    if (!updated) throw notFound("Project not found");
    return c.json(await renderProject(db, updated), 200);
  },
);

projectRoutes.route("/", workspaceRoutes);
projectRoutes.route("/", projectDeleteRoutes);
