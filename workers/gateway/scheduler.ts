import { createRoute, z } from "@hono/zod-openapi";
import { MEDIA_KINDS } from "../../durable-objects/messaging/scheduler/content";
import { lineAgentSendOf } from "../core/principal";
import { ok } from "../http/envelope";
import { authenticated, createRouter, errorResponse, gatewayOk, json, jsonBody } from "../http/openapi";
import { messagingErrors, SessionParamSchema } from "./messages";
import { CreateBodySchema, fields } from "./scheduler-schemas";
import { accessibleSession, callSession } from "./sessions";

/**
 * Scheduled messages (durable-objects/messaging/scheduler/scheduler.ts): created here, fired by the session's
 * alarm, retried while the session is down and FAILED with a reason after the documented limit.
 */
export const schedulerRoutes = createRouter();
const tags = ["Scheduler"];

const ScheduledMessageSchema = z
  .object({
    id: z.string(),
    sessionId: z.string(),
    jid: z.string(),
    content: z.string().nullable().openapi({ description: "The text, or the media's caption" }),
    mediaUrl: z.string().nullable(),
    mediaType: z.enum(MEDIA_KINDS).nullable(),
    fileName: z.string().nullable(),
    sendAt: z.string().openapi({ description: "UTC instant of the (next) send" }),
    timezone: z.string(),
    cronExpression: z.string().nullable(),
    status: z.enum(["PENDING", "SENT", "FAILED", "CANCELLED"]).openapi({
      description:
        "CANCELLED: whoever scheduled it lost operator access to the session (`lastError` says so)",
    }),
    attempts: z.number().int(),
    lastError: z
      .string()
      .nullable()
      .openapi({ description: "Why the last attempt failed, or why it was cancelled" }),
    nextAttemptAt: z.string().nullable(),
    sentAt: z.string().nullable(),
    messageId: z.string().nullable(),
    recurringId: z.string().nullable().openapi({ description: "On one run of a recurring message: its id" }),
    createdBy: z.string().nullable().openapi({
      description:
        "The user who created it or last changed it: it is sent only while they may operate the session",
    }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("ScheduledMessage");

const UpdateBodySchema = z
  .strictObject({
    jid: fields.jid.optional(),
    content: fields.content.nullable().optional(),
    mediaUrl: fields.mediaUrl.nullable().optional(),
    mediaType: fields.mediaType.nullable().optional(),
    fileName: fields.fileName.nullable().optional(),
    sendAt: fields.sendAt.optional(),
    timezone: fields.timezone.optional(),
    cronExpression: fields.cronExpression.nullable().optional(),
  })
  .openapi("ScheduleUpdateBody");

const ScheduleParamsSchema = SessionParamSchema.extend({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "id", in: "path" }, description: "The scheduled message's id" }),
});

const ListQuerySchema = z.object({
  tab: z.enum(["pending", "history"]).default("pending").openapi({
    description:
      "pending: PENDING by sendAt, soonest first; history: SENT, FAILED and CANCELLED, newest first",
  }),
});

const scheduleErrors = {
  ...messagingErrors,
  400: errorResponse("Invalid body: unknown time zone, unreadable or past sendAt, invalid cron, …"),
};

schedulerRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{sessionId}",
    tags,
    summary: "Scheduled messages of the session",
    security: authenticated,
    request: { params: SessionParamSchema, query: ListQuerySchema },
    responses: {
      200: json(gatewayOk(z.array(ScheduledMessageSchema)), "Scheduled messages"),
      ...messagingErrors,
    },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const data = await callSession(c.env, session, "scheduler.list", { tab: c.req.valid("query").tab });
    return c.json(ok("Scheduled messages retrieved", data), 200);
  },
);

schedulerRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}",
    tags,
    summary: "Schedule a message (text, or media by URL with a caption), once or on a cron",
    description:
      "The session need not be connected now. At `sendAt` the message is sent; while the session is down " +
      "it is retried every minute and FAILED with a reason after 10 attempts (docs/broadcast-and-scheduler.md).",
    security: authenticated,
    request: { params: SessionParamSchema, ...jsonBody(CreateBodySchema) },
    responses: { 200: json(gatewayOk(ScheduledMessageSchema), "Scheduled"), ...scheduleErrors },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const data = await callSession(c.env, session, "scheduler.create", {
      ...c.req.valid("json"),
      createdBy: c.get("principal").user.id,
      sentFor: lineAgentSendOf(c.get("principal")),
    });
    return c.json(ok("Message scheduled", data), 200);
  },
);

schedulerRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{sessionId}/{id}",
    tags,
    summary: "One scheduled message",
    security: authenticated,
    request: { params: ScheduleParamsSchema },
    responses: { 200: json(gatewayOk(ScheduledMessageSchema), "The message"), ...messagingErrors },
  }),
  async (c) => {
    const { sessionId, id } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    return c.json(
      ok("Scheduled message retrieved", await callSession(c.env, session, "scheduler.get", { id })),
      200,
    );
  },
);

schedulerRoutes.openapi(
  createRoute({
    method: "put",
    path: "/{sessionId}/{id}",
    tags,
    summary: "Change a PENDING message; fields left out keep their value, null clears an optional one",
    description:
      "A new `sendAt` is read in the resulting `timezone`; without one, the stored instant stays. " +
      "Attempts start over. 409 once the message is SENT or FAILED, or while it is being sent.",
    security: authenticated,
    request: { params: ScheduleParamsSchema, ...jsonBody(UpdateBodySchema) },
    responses: {
      200: json(gatewayOk(ScheduledMessageSchema), "Updated"),
      ...scheduleErrors,
      409: errorResponse("Not PENDING any more, or being sent right now"),
    },
  }),
  async (c) => {
    const { sessionId, id } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const data = await callSession(c.env, session, "scheduler.update", {
      id,
      patch: c.req.valid("json"),
      by: c.get("principal").user.id,
    });
    return c.json(ok("Scheduled message updated", data), 200);
  },
);

schedulerRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/{sessionId}/{id}",
    tags,
    summary: "Delete a scheduled message (a pending one is never sent; a finished one leaves history)",
    security: authenticated,
    request: { params: ScheduleParamsSchema },
    responses: {
      200: json(gatewayOk(z.null()), "Deleted"),
      ...messagingErrors,
      409: errorResponse("Being sent right now"),
    },
  }),
  async (c) => {
    const { sessionId, id } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    await callSession(c.env, session, "scheduler.delete", { id });
    return c.json(ok("Scheduled message deleted", null), 200);
  },
);
