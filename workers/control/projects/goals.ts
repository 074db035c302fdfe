import { createRoute, z } from "@hono/zod-openapi";
import { asc, eq } from "drizzle-orm";
import { type Actor, refOf } from "../../core/actor";
import type { Db } from "../../db/client";
import { iso, newId } from "../../db/client";
import { GOAL_LEVELS, GOAL_STATUSES, type GoalRow, goals } from "../../db/schema";
import { notFound, unprocessable } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { assertCompanyAgent, CompanyParamSchema, companyGoal } from "../companies";
import { activityInsert, companyForActor, controlContext, ensureVisible } from "../shared";
import { GoalParamSchema } from "./schemas";

/**
 * Goals: a hierarchy company > team > agent > task. A child sits strictly below its parent, which
 * also rules out cycles (levels only go down along a chain).
 */
export const goalRoutes = createRouter();
const tags = ["Goals"];

type GoalLevel = (typeof GOAL_LEVELS)[number];
const rank = (level: GoalLevel) => GOAL_LEVELS.indexOf(level);

const Timestamp = z.string().openapi({ format: "date-time" });
const Title = z.string().trim().min(1).max(200);
const Description = z.string().max(10_000);
const Id = z.string().min(1).max(100);

const GoalSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    level: z.enum(GOAL_LEVELS),
    status: z.enum(GOAL_STATUSES),
    parentId: z.string().nullable(),
    ownerAgentId: z.string().nullable(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi("Goal");

const CreateGoalBodySchema = z
  .strictObject({
    title: Title,
    description: Description.nullable().optional(),
    level: z.enum(GOAL_LEVELS).optional().openapi({
      description: "Default: company without a parent, else the level just below the parent's",
    }),
    status: z.enum(GOAL_STATUSES).optional().openapi({ description: "Default active" }),
    parentId: Id.nullable().optional(),
    ownerAgentId: Id.nullable().optional(),
  })
  .openapi("CreateGoalBody");

const UpdateGoalBodySchema = z
  .strictObject({
    title: Title.optional(),
    description: Description.nullable().optional(),
    level: z.enum(GOAL_LEVELS).optional(),
    status: z.enum(GOAL_STATUSES).optional(),
    parentId: Id.nullable().optional(),
    ownerAgentId: Id.nullable().optional(),
  })
  .openapi("UpdateGoalBody");

const rulesError = controlError(
  "parentId or ownerAgentId not of this company, or a level not strictly below the parent's",
);

export const goalResource = (row: GoalRow) => ({
  id: row.id,
  companyId: row.companyId,
  title: row.title,
  description: row.description,
  level: row.level,
  status: row.status,
  parentId: row.parentId,
  ownerAgentId: row.ownerAgentId,
  createdAt: iso(row.createdAt),
  updatedAt: iso(row.updatedAt),
});

/** The level a goal gets: the one asked for (checked against the parent), else the default. */
function levelUnder(parent: GoalRow | undefined, asked: GoalLevel | undefined): GoalLevel {
  if (!parent) return asked ?? "company";
  const below = GOAL_LEVELS[rank(parent.level) + 1];
  const level = asked ?? below;
  if (level === undefined || rank(level) <= rank(parent.level)) {
    throw unprocessable(`A child goal's level must be below its parent's (the parent is ${parent.level})`);
  }
  return level;
}

async function parentOf(db: Db, companyId: string, parentId: string | null | undefined) {
  return parentId ? companyGoal(db, companyId, parentId, "parentId") : undefined;
}

/** Moving a goal up the hierarchy must leave its children below it. */
async function assertAboveChildren(db: Db, goal: GoalRow, level: GoalLevel) {
  const children = await db.select({ level: goals.level }).from(goals).where(eq(goals.parentId, goal.id));
  const blocking = children.filter((child) => rank(child.level) <= rank(level));
  if (blocking.length > 0) {
    throw unprocessable(`level ${level} would not be above this goal's children (${blocking[0]?.level})`);
  }
}

const goalActivity = (db: Db, actor: Actor, row: GoalRow, action: string, details: object, now: number) =>
  activityInsert(
    db,
    {
      companyId: row.companyId,
      actor: refOf(actor),
      action,
      entityType: "goal",
      entityId: row.id,
      details: { ...details },
    },
    now,
  );

goalRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/goals",
    tags,
    summary: "The company's goals, oldest first",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(z.array(GoalSchema), "Goals"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const rows = await db
      .select()
      .from(goals)
      .where(eq(goals.companyId, company.id))
      .orderBy(asc(goals.createdAt), asc(goals.id));
    return c.json(rows.map(goalResource), 200);
  },
);

goalRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/goals",
    tags,
    summary: "Create a goal",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(CreateGoalBodySchema) },
    responses: { 201: json(GoalSchema, "Created"), ...controlErrors, 422: rulesError },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const body = c.req.valid("json");
    const parent = await parentOf(db, company.id, body.parentId);
    const level = levelUnder(parent, body.level);
    if (body.ownerAgentId) await assertCompanyAgent(db, company.id, body.ownerAgentId, "ownerAgentId");
    const now = Date.now();
    const row: GoalRow = {
      id: newId(),
      companyId: company.id,
      title: body.title,
      description: body.description ?? null,
      level,
      status: body.status ?? "active",
      parentId: parent?.id ?? null,
      ownerAgentId: body.ownerAgentId ?? null,
      createdAt: now,
      updatedAt: now,
    };
    await db.batch([
      db.insert(goals).values(row),
      goalActivity(db, actor, row, "goal.created", { title: row.title, level, parentId: row.parentId }, now),
    ]);
    return c.json(goalResource(row), 201);
  },
);

goalRoutes.openapi(
  createRoute({
    method: "get",
    path: "/goals/{goalId}",
    tags,
    summary: "One goal",
    security: controlAuth,
    request: { params: GoalParamSchema },
    responses: { 200: json(GoalSchema, "The goal"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const row = await db
      .select()
      .from(goals)
      .where(eq(goals.id, c.req.valid("param").goalId))
      .get();
    return c.json(goalResource(await ensureVisible(db, actor, row, "Goal")), 200);
  },
);

goalRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/goals/{goalId}",
    tags,
    summary: "Update a goal (the level rule is checked against the parent and the children)",
    security: controlAuth,
    request: { params: GoalParamSchema, ...jsonBody(UpdateGoalBodySchema) },
    responses: { 200: json(GoalSchema, "Updated"), ...controlErrors, 422: rulesError },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const found = await db
      .select()
      .from(goals)
      .where(eq(goals.id, c.req.valid("param").goalId))
      .get();
    const row = await ensureVisible(db, actor, found, "Goal");
    const body = c.req.valid("json");
    if (body.parentId === row.id) throw unprocessable("A goal cannot be its own parent");
    const parentId = body.parentId === undefined ? row.parentId : body.parentId;
    const level = body.level ?? row.level;
    if (body.parentId !== undefined || body.level !== undefined) {
      const parent = await parentOf(db, row.companyId, parentId);
      if (parent) levelUnder(parent, level);
      if (level !== row.level) await assertAboveChildren(db, row, level);
    }
    if (body.ownerAgentId) await assertCompanyAgent(db, row.companyId, body.ownerAgentId, "ownerAgentId");
    const next = {
      title: body.title ?? row.title,
      description: body.description === undefined ? row.description : body.description,
      level,
      status: body.status ?? row.status,
      parentId,
      ownerAgentId: body.ownerAgentId === undefined ? row.ownerAgentId : body.ownerAgentId,
    };
    const changedKeys = (Object.keys(next) as Array<keyof typeof next>).filter(
      (key) => next[key] !== row[key],
    );
    if (changedKeys.length === 0) return c.json(goalResource(row), 200);
    const now = Date.now();
    const [[updated]] = await db.batch([
      db
        .update(goals)
        .set({ ...next, updatedAt: now })
        .where(eq(goals.id, row.id))
        .returning(),
      goalActivity(db, actor, row, "goal.updated", { changedKeys }, now),
    ]);
    if (!updated) throw notFound("Goal not found");
    return c.json(goalResource(updated), 200);
  },
);
