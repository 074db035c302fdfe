import { createRoute, z } from "@hono/zod-openapi";
import { asc, eq } from "drizzle-orm";
import { authorColumns, refOf } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { type RoutineRow, routines, routineTriggers } from "../../db/schema";
import { forbidden } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { CompanyParamSchema } from "../companies";
import type { Statement } from "../issues";
import { checkReferences } from "../issues";
import { activityInsert, companyForActor, controlContext } from "../shared";
import { nextTick, parseSchedule } from "./cron";
import { routineDeleteRoutes } from "./delete";
import { routineRunRoutes } from "./runs";
import {
  CreateRoutineBodySchema,
  RoutineDetailSchema,
  RoutineParamSchema,
  RoutineSchema,
  type UpdateRoutineBody,
  UpdateRoutineBodySchema,
} from "./schemas";
import {
  assertMayChange,
  routineResource,
  scheduleTriggersOf,
  triggerResource,
  triggersOf,
  visibleRoutine,
} from "./store";
import { routineTriggerRoutes } from "./triggers";
import { routineWebhookRoutes } from "./webhook";

/**
 * Routines: recurring work assigned to one agent in one project, fired by schedule, webhook or api
 * triggers or run by hand. Each run creates (or coalesces into) an execution issue and wakes the agent.
 */
export const routineRoutes = createRouter();
const tags = ["Routines"];

const refsError = controlError(
  "assigneeAgentId or projectId not of this company, or an agent that cannot receive work",
);

async function routineDetail(db: Db, row: RoutineRow) {
  const triggers = await triggersOf(db, [row.id]);
  return { ...routineResource(row), triggers: triggers.map(triggerResource) };
}

routineRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/routines",
    tags,
    summary: "The company's routines, oldest first",
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(z.array(RoutineSchema), "Routines"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const rows = await db
      .select()
      .from(routines)
      .where(eq(routines.companyId, company.id))
      .orderBy(asc(routines.createdAt), asc(routines.id));
    return c.json(rows.map(routineResource), 200);
  },
);

routineRoutes.openapi(
  createRoute({
    method: "get",
    path: "/routines/{routineId}",
    tags,
    summary: "One routine with its triggers",
    security: controlAuth,
    request: { params: RoutineParamSchema },
    responses: { 200: json(RoutineDetailSchema, "The routine"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const row = await visibleRoutine(db, actor, c.req.valid("param").routineId);
    return c.json(await routineDetail(db, row), 200);
  },
);

routineRoutes.openapi(
  createRoute({
    method: "post",
    path: "/companies/{companyId}/routines",
    tags,
    summary: "Create a routine (an agent: only one assigned to itself)",
    description:
      "assigneeAgentId and projectId are required and must belong to the company. Defaults: priority " +
      "medium, status active, concurrencyPolicy coalesce_if_active, catchUpPolicy skip_missed. Add " +
      "triggers with POST /routines/{routineId}/triggers.",
    security: controlAuth,
    request: { params: CompanyParamSchema, ...jsonBody(CreateRoutineBodySchema) },
    responses: { 201: json(RoutineDetailSchema, "Created"), ...controlErrors, 422: refsError },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const body = c.req.valid("json");
    assertMayChange(actor, body.assigneeAgentId, "create");
    await checkReferences(db, company.id, {
      assigneeAgentId: body.assigneeAgentId,
      projectId: body.projectId,
    });
    const now = Date.now();
    const author = authorColumns(refOf(actor));
    const row: RoutineRow = {
      id: newId(),
      companyId: company.id,
      title: body.title,
      description: body.description ?? null,
      assigneeAgentId: body.assigneeAgentId,
      projectId: body.projectId,
      priority: body.priority ?? "medium",
      status: body.status ?? "active",
      concurrencyPolicy: body.concurrencyPolicy ?? "coalesce_if_active",
      catchUpPolicy: body.catchUpPolicy ?? "skip_missed",
      createdByUserId: author.userId,
      createdByAgentId: author.agentId,
      createdAt: now,
      updatedAt: now,
    };
    await db.batch([
      db.insert(routines).values(row),
      activityInsert(
        db,
        {
          companyId: company.id,
          actor: refOf(actor),
          action: "routine.created",
          entityType: "routine",
          entityId: row.id,
          details: { title: row.title, assigneeAgentId: row.assigneeAgentId, projectId: row.projectId },
        },
        now,
      ),
    ]);
    return c.json({ ...routineResource(row), triggers: [] }, 201);
  },
);

const PATCHABLE = [
  "title",
  "description",
  "assigneeAgentId",
  "projectId",
  "priority",
  "status",
  "concurrencyPolicy",
  "catchUpPolicy",
] as const satisfies ReadonlyArray<keyof UpdateRoutineBody & keyof RoutineRow>;

/** Only the fields that actually change (so an empty or no-op PATCH writes nothing). */
function routinePatch(row: RoutineRow, body: UpdateRoutineBody): Partial<RoutineRow> {
  const patch: Partial<RoutineRow> = {};
  for (const key of PATCHABLE) {
    const value = body[key];
    if (value !== undefined && value !== row[key]) Object.assign(patch, { [key]: value });
  }
  return patch;
}

/**
 * A routine that becomes active again starts its schedules from now: ticks that passed while it was
 * paused or archived are not "missed" (the catch-up policy is about downtime, not about a pause).
 */
async function rescheduleStatements(db: Db, routineId: string, now: number): Promise<Statement[]> {
  const triggers = await scheduleTriggersOf(db, routineId);
  return triggers.flatMap((trigger) => {
    if (!trigger.cronExpression) return [];
    const next = nextTick(parseSchedule(trigger.cronExpression, trigger.timezone ?? "UTC"), now);
    return [db.update(routineTriggers).set({ nextRunAt: next }).where(eq(routineTriggers.id, trigger.id))];
  });
}

routineRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/routines/{routineId}",
    tags,
    summary: "Update a routine (an agent: only its own, and it cannot reassign it)",
    description:
      "Setting status back to active restarts its schedules from now (ticks during the pause are not " +
      "caught up).",
    security: controlAuth,
    request: { params: RoutineParamSchema, ...jsonBody(UpdateRoutineBodySchema) },
    responses: { 200: json(RoutineDetailSchema, "Updated"), ...controlErrors, 422: refsError },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const row = await visibleRoutine(db, actor, c.req.valid("param").routineId);
    const body = c.req.valid("json");
    assertMayChange(actor, row.assigneeAgentId, "update");
    const patch = routinePatch(row, body);
    if (actor.type === "agent" && patch.assigneeAgentId !== undefined)
      throw forbidden("An agent cannot reassign a routine");
    await checkReferences(db, row.companyId, {
      assigneeAgentId: patch.assigneeAgentId,
      projectId: patch.projectId,
    });
    if (Object.keys(patch).length === 0) return c.json(await routineDetail(db, row), 200);
    const now = Date.now();
    const reactivated = patch.status === "active";
    const statements: Statement[] = reactivated ? await rescheduleStatements(db, row.id, now) : [];
    const updated: RoutineRow = { ...row, ...patch, updatedAt: now };
    await db.batch([
      db
        .update(routines)
        .set({ ...patch, updatedAt: now })
        .where(eq(routines.id, row.id)),
      ...statements,
      activityInsert(
        db,
        {
          companyId: row.companyId,
          actor: refOf(actor),
          action: "routine.updated",
          entityType: "routine",
          entityId: row.id,
          details: { changes: patch },
        },
        now,
      ),
    ]);
    return c.json(await routineDetail(db, updated), 200);
  },
);

// Sub-resources: one mount point for the whole routine API (routes.ts mounts routineRoutes).
routineRoutes.route("/", routineTriggerRoutes);
routineRoutes.route("/", routineDeleteRoutes);
routineRoutes.route("/", routineRunRoutes);
routineRoutes.route("/", routineWebhookRoutes);
