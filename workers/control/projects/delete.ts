import { createRoute } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { refOf } from "../../core/actor";
import { goals, issues, projects, routines } from "../../db/schema";
import { conflict } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter } from "../../http/openapi";
import { budgetsRemoved } from "../budgets";
import { activityInsert, controlContext, ensureVisible, namedFew, requireBoard } from "../shared";
import { GoalParamSchema, ProjectParamSchema } from "./schemas";
import { visibleProject } from "./store";

/**
 * DELETE for projects and goals (board only). Issues that referred to them stay, unfiled: the work
 * outlives how it was organised. Written straight to D1, not through the issues' IssueDOs: only the
 * project or goal column changes, and an IssueDO's cached detail already tolerates other entities'
 * changes for its few seconds of TTL.
 */
export const projectDeleteRoutes = createRouter();

projectDeleteRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/projects/{projectId}",
    tags: ["Projects"],
    summary: "Delete a project (board only)",
    description:
      "Deletes the project with its workspaces and goal links; its issues stay with projectId null. A " +
      "project that routines still use answers 409 naming them (move or delete them first).",
    security: controlAuth,
    request: { params: ProjectParamSchema },
    responses: { 204: { description: "Deleted" }, ...controlErrors, 409: controlError("Routines use it") },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const project = await visibleProject(db, actor, c.req.valid("param").projectId);
    requireBoard(actor, "delete projects");
    const used = await db
      .select({ id: routines.id, title: routines.title })
      .from(routines)
      .where(eq(routines.projectId, project.id));
    if (used.length > 0)
      throw conflict(
        `Routines still use this project, move or delete them first: ${namedFew(used.map((row) => `"${row.title}"`))}`,
        {
          routineIds: used.map((row) => row.id),
        },
      );
    const now = Date.now();
    await db.batch([
      db.update(issues).set({ projectId: null, updatedAt: now }).where(eq(issues.projectId, project.id)),
      activityInsert(
        db,
        {
          companyId: project.companyId,
          actor: refOf(actor),
          action: "project.deleted",
          entityType: "project",
          entityId: project.id,
          details: { name: project.name },
        },
        now,
      ),
      // Its budgets go with it; their incidents close (nothing is left to hold).
      ...budgetsRemoved(db, "project", project.id, now),
      db.delete(projects).where(eq(projects.id, project.id)),
    ]);
    return c.body(null, 204);
  },
);

projectDeleteRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/goals/{goalId}",
    tags: ["Goals"],
    summary: "Delete a goal (board only)",
    description:
      "Its sub-goals move up to its parent (or become top-level); projects and issues that pointed at it " +
      "keep existing without it.",
    security: controlAuth,
    request: { params: GoalParamSchema },
    responses: { 204: { description: "Deleted" }, ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const found = await db
      .select()
      .from(goals)
      .where(eq(goals.id, c.req.valid("param").goalId))
      .get();
    const goal = await ensureVisible(db, actor, found, "Goal");
    requireBoard(actor, "delete goals");
    const now = Date.now();
    await db.batch([
      db.update(goals).set({ parentId: goal.parentId, updatedAt: now }).where(eq(goals.parentId, goal.id)),
      db.update(projects).set({ goalId: null, updatedAt: now }).where(eq(projects.goalId, goal.id)),
      db.update(issues).set({ goalId: null, updatedAt: now }).where(eq(issues.goalId, goal.id)),
      activityInsert(
        db,
        {
          companyId: goal.companyId,
          actor: refOf(actor),
          action: "goal.deleted",
          entityType: "goal",
          entityId: goal.id,
          details: { title: goal.title, level: goal.level },
        },
        now,
      ),
      db.delete(goals).where(eq(goals.id, goal.id)),
    ]);
    return c.body(null, 204);
  },
);
