import { createRoute, z } from "@hono/zod-openapi";
import { and, eq, ne, sql } from "drizzle-orm";
import { type Actor, refOf } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { type ProjectRow, projectWorkspaces, type WorkspaceRow } from "../../db/schema";
import { notFound, unprocessable } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { activityInsert, controlContext } from "../shared";
import {
  type CreateWorkspaceBody,
  CreateWorkspaceBodySchema,
  ProjectParamSchema,
  UpdateWorkspaceBodySchema,
  WorkspaceParamSchema,
  WorkspaceSchema,
} from "./schemas";
import {
  assertWorkspaceLocation,
  defaultWorkspaceName,
  listWorkspaces,
  visibleProject,
  workspaceResource,
} from "./store";

/**
 * Workspaces of a project. Invariant: a project with workspaces has exactly one primary. The first
 * is primary, promoting one demotes the others in the same batch, and deleting the primary promotes
 * the oldest remaining one.
 */
export const workspaceRoutes = createRouter();
const tags = ["Projects"];

const WORKSPACE_NOT_FOUND = "Workspace not found";
/** Aliased: inside an UPDATE of the same table, the subquery must not read the outer row. */
const noPrimaryYet = (projectId: string) =>
  sql`NOT EXISTS (SELECT 1 FROM project_workspaces AS pw WHERE pw.project_id = ${projectId} AND pw.is_primary = 1)`;

const demoteOthers = (db: Db, projectId: string, keepId: string, now: number) =>
  db
    .update(projectWorkspaces)
    .set({ isPrimary: false, updatedAt: now })
    .where(
      and(
        eq(projectWorkspaces.projectId, projectId),
        ne(projectWorkspaces.id, keepId),
        eq(projectWorkspaces.isPrimary, true),
      ),
    );

const workspaceActivity = (
  db: Db,
  actor: Actor,
  project: ProjectRow,
  action: string,
  details: object,
  now: number,
) =>
  activityInsert(
    db,
    {
      companyId: project.companyId,
      actor: refOf(actor),
      action: `project.workspace_${action}`,
      entityType: "project",
      entityId: project.id,
      details: { ...details },
    },
    now,
  );

/**
 * The statements that add a workspace (validated here: 422 without cwd and repoUrl), for the
 * caller's batch. Not asked to be primary, it still is when the project has no primary yet; the
 * check runs inside the insert, so two concurrent first workspaces cannot both become primary.
 */
export function workspaceInsertStatements(
  db: Db,
  actor: Actor,
  project: ProjectRow,
  body: CreateWorkspaceBody,
  now: number,
) {
  const location = { cwd: body.cwd ?? null, repoUrl: body.repoUrl ?? null };
  assertWorkspaceLocation(location);
  const id = newId();
  const insert = db
    .insert(projectWorkspaces)
    .values({
      id,
      companyId: project.companyId,
      projectId: project.id,
      name: body.name ?? defaultWorkspaceName(location),
      ...location,
      repoRef: body.repoRef ?? null,
      isPrimary: body.isPrimary === true ? true : noPrimaryYet(project.id),
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  const activity = workspaceActivity(db, actor, project, "created", { workspaceId: id }, now);
  const demote = body.isPrimary === true ? [demoteOthers(db, project.id, id, now)] : [];
  // Demoting after the insert is safe: it skips the new row.
  return { id, statements: [insert, activity, ...demote] as const };
}

async function workspaceInPath(db: Db, actor: Actor, projectId: string, workspaceId: string) {
  const project = await visibleProject(db, actor, projectId);
  const workspace = await db
    .select()
    .from(projectWorkspaces)
    .where(and(eq(projectWorkspaces.id, workspaceId), eq(projectWorkspaces.projectId, project.id)))
    .get();
  if (!workspace) throw notFound(WORKSPACE_NOT_FOUND);
  return { project, workspace };
}

const reread = async (db: Db, id: string): Promise<WorkspaceRow> => {
  const row = await db.select().from(projectWorkspaces).where(eq(projectWorkspaces.id, id)).get();
  if (!row) throw notFound(WORKSPACE_NOT_FOUND);
  return row;
};

workspaceRoutes.openapi(
  createRoute({
    method: "get",
    path: "/projects/{projectId}/workspaces",
    tags,
    summary: "A project's workspaces, oldest first",
    security: controlAuth,
    request: { params: ProjectParamSchema },
    responses: { 200: json(z.array(WorkspaceSchema), "Workspaces"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const project = await visibleProject(db, actor, c.req.valid("param").projectId);
    return c.json((await listWorkspaces(db, project.id)).map(workspaceResource), 200);
  },
);

workspaceRoutes.openapi(
  createRoute({
    method: "post",
    path: "/projects/{projectId}/workspaces",
    tags,
    summary: "Add a workspace (at least one of cwd or repoUrl)",
    description:
      "The project's first workspace is primary; isPrimary true makes a later one primary instead.",
    security: controlAuth,
    request: { params: ProjectParamSchema, ...jsonBody(CreateWorkspaceBodySchema) },
    responses: {
      201: json(WorkspaceSchema, "Created"),
      ...controlErrors,
      422: controlError("Neither cwd nor repoUrl"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const project = await visibleProject(db, actor, c.req.valid("param").projectId);
    const { id, statements } = workspaceInsertStatements(db, actor, project, c.req.valid("json"), Date.now());
    await db.batch(statements);
    return c.json(workspaceResource(await reread(db, id)), 201);
  },
);

workspaceRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/projects/{projectId}/workspaces/{workspaceId}",
    tags,
    summary: "Update a workspace; isPrimary true makes it the primary one",
    security: controlAuth,
    request: { params: WorkspaceParamSchema, ...jsonBody(UpdateWorkspaceBodySchema) },
    responses: {
      200: json(WorkspaceSchema, "Updated"),
      ...controlErrors,
      422: controlError("Would leave neither cwd nor repoUrl, or unset the primary flag"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { projectId, workspaceId } = c.req.valid("param");
    const { project, workspace } = await workspaceInPath(db, actor, projectId, workspaceId);
    const body = c.req.valid("json");
    if (body.isPrimary === false && workspace.isPrimary) {
      throw unprocessable("A project keeps one primary workspace: set isPrimary true on another one instead");
    }
    const next = {
      name: body.name ?? workspace.name,
      cwd: body.cwd === undefined ? workspace.cwd : body.cwd,
      repoUrl: body.repoUrl === undefined ? workspace.repoUrl : body.repoUrl,
      repoRef: body.repoRef === undefined ? workspace.repoRef : body.repoRef,
      isPrimary: body.isPrimary === true || workspace.isPrimary,
    };
    assertWorkspaceLocation(next);
    const changedKeys = (Object.keys(next) as Array<keyof typeof next>).filter(
      (key) => next[key] !== workspace[key],
    );
    if (changedKeys.length === 0) return c.json(workspaceResource(workspace), 200);
    const now = Date.now();
    const promote =
      next.isPrimary && !workspace.isPrimary ? [demoteOthers(db, project.id, workspace.id, now)] : [];
    await db.batch([
      db
        .update(projectWorkspaces)
        .set({ ...next, updatedAt: now })
        .where(eq(projectWorkspaces.id, workspace.id)),
      workspaceActivity(db, actor, project, "updated", { workspaceId: workspace.id, changedKeys }, now),
      ...promote,
    ]);
    return c.json(workspaceResource(await reread(db, workspace.id)), 200);
  },
);

workspaceRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/projects/{projectId}/workspaces/{workspaceId}",
    tags,
    summary: "Delete a workspace; deleting the primary promotes the oldest remaining one",
    security: controlAuth,
    request: { params: WorkspaceParamSchema },
    responses: { 200: json(WorkspaceSchema, "The deleted workspace"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { projectId, workspaceId } = c.req.valid("param");
    const { project, workspace } = await workspaceInPath(db, actor, projectId, workspaceId);
    const now = Date.now();
    const oldestRemaining = db
      .select({ id: projectWorkspaces.id })
      .from(projectWorkspaces)
      .where(eq(projectWorkspaces.projectId, project.id))
      .orderBy(projectWorkspaces.createdAt, sql`rowid`)
      .limit(1);
    await db.batch([
      db.delete(projectWorkspaces).where(eq(projectWorkspaces.id, workspace.id)),
      // Runs after the delete, in the same transaction: promotes only when no primary is left.
      db
        .update(projectWorkspaces)
        .set({ isPrimary: true, updatedAt: now })
        .where(and(eq(projectWorkspaces.id, sql`(${oldestRemaining})`), noPrimaryYet(project.id))),
      workspaceActivity(
        db,
        actor,
        project,
        "deleted",
        { workspaceId: workspace.id, wasPrimary: workspace.isPrimary },
        now,
      ),
    ]);
    return c.json(workspaceResource(workspace), 200);
  },
);
