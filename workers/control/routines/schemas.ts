import { z } from "@hono/zod-openapi";
import {
  CATCH_UP_POLICIES,
  CONCURRENCY_POLICIES,
  ISSUE_PRIORITIES,
  ROUTINE_RUN_SOURCES,
  ROUTINE_RUN_STATUSES,
  ROUTINE_STATUSES,
  TRIGGER_KINDS,
} from "../../db/schema";
import { nullableRef } from "../../http/openapi";

/** Request and response shapes of routines, their triggers and runs. */

const Id = z.string().min(1).max(100);
const Timestamp = z.string().openapi({ format: "date-time" });
const NullableTimestamp = Timestamp.nullable();

export const MAX_ROUTINE_TITLE = 200;
export const DEFAULT_REPLAY_WINDOW_SEC = 300;
export const DEFAULT_RUN_HISTORY = 50;
export const MAX_RUN_HISTORY = 200;

export const RoutineParamSchema = z.object({ routineId: Id });
export const TriggerParamSchema = z.object({ triggerId: Id });
export const PublicTriggerParamSchema = z.object({ publicId: z.string().min(1).max(100) });

const Title = z.string().trim().min(1).max(MAX_ROUTINE_TITLE);
const Description = z.string().max(65_536);
const Label = z.string().trim().min(1).max(200);
const CronExpression = z
  .string()
  .min(1)
  .max(200)
  .openapi({ example: "0 9 * * 1-5", description: "5 fields: minute hour day-of-month month day-of-week" });
const TimeZone = z
  .string()
  .min(1)
  .max(100)
  .openapi({ example: "Europe/Berlin", description: "IANA; default UTC" });
const ReplayWindow = z.number().int().min(30).max(86_400);

const policies = {
  priority: z.enum(ISSUE_PRIORITIES),
  status: z.enum(ROUTINE_STATUSES),
  concurrencyPolicy: z.enum(CONCURRENCY_POLICIES).openapi({
    description:
      "While the routine's execution issue is still open: coalesce_if_active (default) links the run to it " +
      "and wakes the agent again, skip_if_active records a skipped run, always_enqueue opens another issue",
  }),
  catchUpPolicy: z.enum(CATCH_UP_POLICIES).openapi({
    description:
      "Schedule ticks missed while the service was down: skip_missed (default) fires once; " +
      "enqueue_missed_with_cap fires each missed tick, the latest 25 at most (not for crons that fire more " +
      "than once an hour: those skip)",
  }),
};

export const CreateRoutineBodySchema = z
  .strictObject({
    title: Title,
    description: Description.nullable().optional(),
    assigneeAgentId: Id,
    projectId: Id,
    priority: policies.priority.optional().openapi({ description: "Default medium" }),
    status: policies.status.optional().openapi({ description: "Default active" }),
    concurrencyPolicy: policies.concurrencyPolicy.optional(),
    catchUpPolicy: policies.catchUpPolicy.optional(),
  })
  .openapi("CreateRoutineBody");

export const UpdateRoutineBodySchema = z
  .strictObject({
    title: Title.optional(),
    description: Description.nullable().optional(),
    assigneeAgentId: Id.optional().openapi({ description: "Board only (an agent cannot reassign)" }),
    projectId: Id.optional(),
    priority: policies.priority.optional(),
    status: policies.status.optional(),
    concurrencyPolicy: policies.concurrencyPolicy.optional(),
    catchUpPolicy: policies.catchUpPolicy.optional(),
  })
  .openapi("UpdateRoutineBody");

export type CreateRoutineBody = z.infer<typeof CreateRoutineBodySchema>;
export type UpdateRoutineBody = z.infer<typeof UpdateRoutineBodySchema>;

const triggerCommon = { label: Label.nullable().optional(), enabled: z.boolean().optional() };

export const CreateTriggerBodySchema = z
  .discriminatedUnion("kind", [
    z.strictObject({
      kind: z.literal("schedule"),
      ...triggerCommon,
      cronExpression: CronExpression,
      timezone: TimeZone.optional(),
    }),
    z.strictObject({
      kind: z.literal("webhook"),
      ...triggerCommon,
      replayWindowSec: ReplayWindow.optional().openapi({ description: "Default 300" }),
    }),
    z.strictObject({ kind: z.literal("api"), ...triggerCommon }),
  ])
  .openapi("CreateRoutineTriggerBody");

export const UpdateTriggerBodySchema = z
  .strictObject({
    label: Label.nullable().optional(),
    enabled: z.boolean().optional(),
    cronExpression: CronExpression.optional().openapi({ description: "schedule triggers only (else 422)" }),
    timezone: TimeZone.optional().openapi({ description: "schedule triggers only (else 422)" }),
    replayWindowSec: ReplayWindow.optional().openapi({ description: "webhook triggers only (else 422)" }),
  })
  .openapi("UpdateRoutineTriggerBody");

export type CreateTriggerBody = z.infer<typeof CreateTriggerBodySchema>;
export type UpdateTriggerBody = z.infer<typeof UpdateTriggerBodySchema>;

export const RunRoutineBodySchema = z
  .strictObject({
    triggerId: Id.optional().openapi({
      description: "An api trigger of this routine: the run's source is api",
    }),
    payload: z.record(z.string(), z.unknown()).optional().openapi({ description: "Stored with the run" }),
  })
  .openapi("RunRoutineBody");

export const RunsQuerySchema = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_RUN_HISTORY)
    .optional()
    .openapi({ description: "Default 50" }),
});

export const TriggerSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    routineId: z.string(),
    kind: z.enum(TRIGGER_KINDS),
    label: z.string().nullable(),
    enabled: z.boolean(),
    cronExpression: z.string().nullable(),
    timezone: z.string().nullable(),
    nextRunAt: NullableTimestamp.openapi({ description: "schedule: the next due minute" }),
    lastFiredAt: NullableTimestamp,
    publicId: z.string().nullable().openapi({ description: "webhook: the id in the public fire URL" }),
    replayWindowSec: z.number().nullable(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi("RoutineTrigger");

export const RoutineSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    assigneeAgentId: z.string(),
    projectId: z.string(),
    priority: z.enum(ISSUE_PRIORITIES),
    status: z.enum(ROUTINE_STATUSES),
    concurrencyPolicy: z.enum(CONCURRENCY_POLICIES),
    catchUpPolicy: z.enum(CATCH_UP_POLICIES),
    createdByUserId: z.string().nullable(),
    createdByAgentId: z.string().nullable(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi("Routine");

export const RoutineDetailSchema = RoutineSchema.extend({ triggers: z.array(TriggerSchema) }).openapi(
  "RoutineDetail",
);

export const SecretMaterialSchema = z
  .object({
    webhookUrl: z.string().openapi({ description: "POST here, signed (see the fire endpoint)" }),
    webhookSecret: z.string().openapi({ description: "The HMAC-SHA256 signing secret: shown only here" }),
  })
  .openapi("RoutineTriggerSecretMaterial");

export const TriggerWithSecretSchema = z
  .object({ trigger: TriggerSchema, secretMaterial: nullableRef(SecretMaterialSchema) })
  .openapi("RoutineTriggerCreated");

export const RoutineRunSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    routineId: z.string(),
    triggerId: z.string().nullable(),
    source: z.enum(ROUTINE_RUN_SOURCES),
    status: z.enum(ROUTINE_RUN_STATUSES),
    issueId: z.string().nullable().openapi({ description: "The execution issue created or coalesced into" }),
    heartbeatRunId: z.string().nullable().openapi({ description: "The agent's wake (null when skipped)" }),
    scheduledFor: NullableTimestamp.openapi({ description: "schedule: the due minute fired" }),
    payload: z.unknown().nullable(),
    reason: z.string().nullable(),
    createdAt: Timestamp,
  })
  .openapi("RoutineRun");
