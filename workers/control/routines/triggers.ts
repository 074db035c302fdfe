import { createRoute } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import type { Context } from "hono";
import { randomBytes, toHex } from "../../auth/crypto";
import { seal } from "../../auth/secret-box";
import { type Actor, refOf } from "../../core/actor";
import type { AppEnv } from "../../core/env";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { type RoutineTriggerRow, routineTriggers } from "../../db/schema";
import { unprocessable } from "../../http/errors";
import { controlAuth, controlError, controlErrors, createRouter, json, jsonBody } from "../../http/openapi";
import { activityInsert, controlContext } from "../shared";
import { firstTick } from "./cron";
import {
  type CreateTriggerBody,
  CreateTriggerBodySchema,
  DEFAULT_REPLAY_WINDOW_SEC,
  RoutineParamSchema,
  TriggerParamSchema,
  TriggerSchema,
  TriggerWithSecretSchema,
  type UpdateTriggerBody,
  UpdateTriggerBodySchema,
} from "./schemas";
import { assertMayChange, triggerResource, visibleRoutine, visibleTrigger } from "./store";

/** Triggers of a routine: schedule (cron), webhook (signed public fire URL) and api. */
export const routineTriggerRoutes = createRouter();
const tags = ["Routines"];

const PUBLIC_ID_BYTES = 12;
const SECRET_BYTES = 24;

const ruleError = controlError(
  "Bad cronExpression or timezone (the message says which part), or a field that does not apply to this kind",
);

/** The fire URL on the host the caller used (the same Worker serves the public route). */
const webhookUrl = (c: Context<AppEnv>, publicId: string) =>
  `${new URL(c.req.url).origin}/api/routine-triggers/public/${publicId}/fire`;

/** A fresh signing secret: plaintext for the one response that shows it, ciphertext to store. */
async function newSecret(c: Context<AppEnv>, triggerId: string) {
  const secret = toHex(randomBytes(SECRET_BYTES));
  return { secret, ciphertext: await seal(c.env.SECRETS_MASTER_KEY, secret, triggerId) };
}

async function newTriggerRow(
  c: Context<AppEnv>,
  routine: { id: string; companyId: string },
  body: CreateTriggerBody,
  now: number,
): Promise<{ row: RoutineTriggerRow; secret: string | null }> {
  const row: RoutineTriggerRow = {
    id: newId(),
    companyId: routine.companyId,
    routineId: routine.id,
    kind: body.kind,
    label: body.label ?? null,
    enabled: body.enabled ?? true,
    cronExpression: null,
    timezone: null,
    nextRunAt: null,
    lastFiredAt: null,
    publicId: null,
    secretCiphertext: null,
    replayWindowSec: null,
    createdAt: now,
    updatedAt: now,
  };
  if (body.kind === "schedule") {
    row.cronExpression = body.cronExpression.trim().split(/\s+/).join(" ");
    row.timezone = body.timezone ?? "UTC";
    row.nextRunAt = firstTick(row.cronExpression, row.timezone, now);
    return { row, secret: null };
  }
  if (body.kind === "webhook") {
    const { secret, ciphertext } = await newSecret(c, row.id);
    row.publicId = toHex(randomBytes(PUBLIC_ID_BYTES));
    row.secretCiphertext = ciphertext;
    row.replayWindowSec = body.replayWindowSec ?? DEFAULT_REPLAY_WINDOW_SEC;
    return { row, secret };
  }
  return { row, secret: null };
}

const triggerActivity = (
  db: Db,
  actor: Actor,
  row: RoutineTriggerRow,
  action: string,
  details: Record<string, unknown>,
  now: number,
) =>
  activityInsert(
    db,
    {
      companyId: row.companyId,
      actor: refOf(actor),
      action,
      entityType: "routine_trigger",
      entityId: row.id,
      details: { routineId: row.routineId, kind: row.kind, ...details },
    },
    now,
  );

routineTriggerRoutes.openapi(
  createRoute({
    method: "post",
    path: "/routines/{routineId}/triggers",
    tags,
    summary: "Add a trigger: schedule, webhook or api",
    description:
      "schedule: `cronExpression` (5 fields) and `timezone` (IANA, default UTC); nextRunAt is the next due " +
      "minute. webhook: a public id and a signing secret, returned ONCE here as `secretMaterial` (only its " +
      "ciphertext is stored). api: fired with POST /routines/{routineId}/run and its triggerId.",
    security: controlAuth,
    request: { params: RoutineParamSchema, ...jsonBody(CreateTriggerBodySchema) },
    responses: {
      201: json(TriggerWithSecretSchema, "Created; secretMaterial is set for webhook triggers only"),
      ...controlErrors,
      422: ruleError,
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const routine = await visibleRoutine(db, actor, c.req.valid("param").routineId);
    assertMayChange(actor, routine.assigneeAgentId, "change");
    const now = Date.now();
    const { row, secret } = await newTriggerRow(c, routine, c.req.valid("json"), now);
    await db.batch([
      db.insert(routineTriggers).values(row),
      triggerActivity(db, actor, row, "routine.trigger_created", { label: row.label }, now),
    ]);
    const secretMaterial =
      secret && row.publicId ? { webhookUrl: webhookUrl(c, row.publicId), webhookSecret: secret } : null;
    return c.json({ trigger: triggerResource(row), secretMaterial }, 201);
  },
);

/** The changed columns; schedule fields on other kinds (and the replay window on non-webhooks) are 422. */
function triggerPatch(
  row: RoutineTriggerRow,
  body: UpdateTriggerBody,
  now: number,
): Partial<RoutineTriggerRow> {
  const notFor = (field: string) =>
    unprocessable(`${field} does not apply to a ${row.kind} trigger`, { field, kind: row.kind });
  if ((body.cronExpression !== undefined || body.timezone !== undefined) && row.kind !== "schedule")
    throw notFor(body.cronExpression !== undefined ? "cronExpression" : "timezone");
  if (body.replayWindowSec !== undefined && row.kind !== "webhook") throw notFor("replayWindowSec");
  const patch: Partial<RoutineTriggerRow> = {};
  if (body.label !== undefined && body.label !== row.label) patch.label = body.label;
  if (body.enabled !== undefined && body.enabled !== row.enabled) patch.enabled = body.enabled;
  if (body.replayWindowSec !== undefined && body.replayWindowSec !== row.replayWindowSec)
    patch.replayWindowSec = body.replayWindowSec;
  if (row.kind === "schedule") {
    const cron = body.cronExpression?.trim().split(/\s+/).join(" ") ?? row.cronExpression ?? "";
    const timezone = body.timezone ?? row.timezone ?? "UTC";
    if (cron !== row.cronExpression) patch.cronExpression = cron;
    if (timezone !== row.timezone) patch.timezone = timezone;
    // A new schedule, or one switched back on, starts from now: no catch-up for the time it was off.
    if (patch.cronExpression !== undefined || patch.timezone !== undefined || patch.enabled === true)
      patch.nextRunAt = firstTick(cron, timezone, now);
  }
  return patch;
}

routineTriggerRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/routine-triggers/{triggerId}",
    tags,
    summary: "Update a trigger (label, enabled, cronExpression, timezone, replayWindowSec)",
    description:
      "Changing the schedule, or enabling it again, recomputes nextRunAt from now. The webhook secret is " +
      "changed with rotate-secret, not here.",
    security: controlAuth,
    request: { params: TriggerParamSchema, ...jsonBody(UpdateTriggerBodySchema) },
    responses: { 200: json(TriggerSchema, "Updated"), ...controlErrors, 422: ruleError },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { trigger, routine } = await visibleTrigger(db, actor, c.req.valid("param").triggerId);
    assertMayChange(actor, routine.assigneeAgentId, "change");
    const now = Date.now();
    const patch = triggerPatch(trigger, c.req.valid("json"), now);
    if (Object.keys(patch).length === 0) return c.json(triggerResource(trigger), 200);
    const updated: RoutineTriggerRow = { ...trigger, ...patch, updatedAt: now };
    await db.batch([
      db
        .update(routineTriggers)
        .set({ ...patch, updatedAt: now })
        .where(eq(routineTriggers.id, trigger.id)),
      triggerActivity(db, actor, trigger, "routine.trigger_updated", { changes: patch }, now),
    ]);
    return c.json(triggerResource(updated), 200);
  },
);

routineTriggerRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/routine-triggers/{triggerId}",
    tags,
    summary: "Delete a trigger (its runs stay in the history)",
    security: controlAuth,
    request: { params: TriggerParamSchema },
    responses: { 204: { description: "Deleted" }, ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { trigger, routine } = await visibleTrigger(db, actor, c.req.valid("param").triggerId);
    assertMayChange(actor, routine.assigneeAgentId, "change");
    const now = Date.now();
    await db.batch([
      db.delete(routineTriggers).where(eq(routineTriggers.id, trigger.id)),
      triggerActivity(db, actor, trigger, "routine.trigger_deleted", { label: trigger.label }, now),
    ]);
    return c.body(null, 204);
  },
);

routineTriggerRoutes.openapi(
  createRoute({
    method: "post",
    path: "/routine-triggers/{triggerId}/rotate-secret",
    tags,
    summary: "Replace a webhook trigger's signing secret; the previous one stops working at once",
    description: "The new secret is returned once, as `secretMaterial`. The body, if any, is ignored.",
    security: controlAuth,
    request: { params: TriggerParamSchema },
    responses: {
      200: json(TriggerWithSecretSchema, "The trigger and its new secret"),
      ...controlErrors,
      422: controlError("Not a webhook trigger"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { trigger, routine } = await visibleTrigger(db, actor, c.req.valid("param").triggerId);
    assertMayChange(actor, routine.assigneeAgentId, "change");
    if (trigger.kind !== "webhook" || !trigger.publicId)
      throw unprocessable(`Only webhook triggers have a signing secret (this one is ${trigger.kind})`);
    const now = Date.now();
    const { secret, ciphertext } = await newSecret(c, trigger.id);
    await db.batch([
      db
        .update(routineTriggers)
        .set({ secretCiphertext: ciphertext, updatedAt: now })
        .where(eq(routineTriggers.id, trigger.id)),
      triggerActivity(db, actor, trigger, "routine.trigger_secret_rotated", {}, now),
    ]);
    return c.json(
      {
        trigger: triggerResource({ ...trigger, updatedAt: now }),
        secretMaterial: { webhookUrl: webhookUrl(c, trigger.publicId), webhookSecret: secret },
      },
      200,
    );
  },
);
