import { createRoute, z } from "@hono/zod-openapi";
import { and, desc, eq } from "drizzle-orm";
import { refOf } from "../../core/actor";
import type { Db } from "../../db/client";
import { type RoutineRow, routineRuns, routineTriggers } from "../../db/schema";
import { conflict, unprocessable } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json } from "../../http/openapi";
import { controlContext } from "../shared";
import { runsQueued } from "../wakes";
import { dispatchRoutineRun } from "./dispatch";
import {
  DEFAULT_RUN_HISTORY,
  RoutineParamSchema,
  RoutineRunSchema,
  RunRoutineBodySchema,
  RunsQuerySchema,
} from "./schemas";
import { routineRunResource, visibleRoutine } from "./store";

/** Manual and api runs of a routine, and its run history. */
export const routineRunRoutes = createRouter();
const tags = ["Routines"];

/** The api trigger a run names: of this routine, of kind api, enabled, with the routine active. */
async function apiTrigger(db: Db, routine: RoutineRow, triggerId: string) {
  const trigger = await db
    .select()
    .from(routineTriggers)
    .where(and(eq(routineTriggers.id, triggerId), eq(routineTriggers.routineId, routine.id)))
    .get();
  if (!trigger) throw unprocessable("triggerId: no such trigger on this routine", { field: "triggerId" });
  if (trigger.kind !== "api")
    throw unprocessable(`triggerId: a ${trigger.kind} trigger cannot be fired through the run endpoint`, {
      field: "triggerId",
    });
  if (!trigger.enabled || routine.status !== "active") throw conflict("Routine trigger is not active");
  return trigger;
}

routineRunRoutes.openapi(
  createRoute({
    method: "post",
    path: "/routines/{routineId}/run",
    tags,
    summary: "Run a routine now (manual, or through one of its api triggers)",
    description:
      "Bypasses the schedule but not the concurrency policy: while its execution issue is open, " +
      "coalesce_if_active links the run to it and wakes the agent again, skip_if_active records a skipped " +
      "run, always_enqueue opens another issue. A manual run works on an active or paused routine (not an " +
      "archived one); with `triggerId` (an api trigger) the trigger must be enabled and the routine active. " +
      "The body is optional.",
    security: controlAuth,
    request: {
      params: RoutineParamSchema,
      body: { content: { "application/json": { schema: RunRoutineBodySchema } }, required: false },
    },
    responses: {
      202: json(RoutineRunSchema, "The routine run"),
      ...controlErrors,
      409: controlError("The routine is archived, or the api trigger or its routine is not active"),
      422: controlError("triggerId is not an api trigger of this routine"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const routine = await visibleRoutine(db, actor, c.req.valid("param").routineId);
    const body = c.req.valid("json") ?? {};
    const trigger = body.triggerId ? await apiTrigger(db, routine, body.triggerId) : null;
    if (routine.status === "archived") throw conflict("Routine is archived");
    const { run, queued } = await dispatchRoutineRun(db, routine, {
      source: trigger ? "api" : "manual",
      triggerId: trigger?.id ?? null,
      scheduledFor: null,
      payload: body.payload ?? null,
      actor: refOf(actor),
    });
    if (queued) c.executionCtx.waitUntil(runsQueued(c.env, new URL(c.req.url).origin));
    return c.json(routineRunResource(run), 202);
  },
);

routineRunRoutes.openapi(
  createRoute({
    method: "get",
    path: "/routines/{routineId}/runs",
    tags,
    summary: "The routine's runs, newest first (50 by default, ?limit up to 200)",
    security: controlAuth,
    request: { params: RoutineParamSchema, query: RunsQuerySchema },
    responses: { 200: json(z.array(RoutineRunSchema), "Runs"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const routine = await visibleRoutine(db, actor, c.req.valid("param").routineId);
    const limit = c.req.valid("query").limit ?? DEFAULT_RUN_HISTORY;
    const rows = await db
      .select()
      .from(routineRuns)
      .where(eq(routineRuns.routineId, routine.id))
      .orderBy(desc(routineRuns.createdAt), desc(routineRuns.id))
      .limit(limit);
    return c.json(rows.map(routineRunResource), 200);
  },
);
