import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { isChatJid } from "../../bridge/src/protocol/messaging";
import type { AppEnv } from "../core/env";
import type { SessionRow } from "../db/schema";
import { ok } from "../http/envelope";
import { badRequest } from "../http/errors";
import { authenticated, createRouter, errorResponse, gatewayOk, json, jsonBody } from "../http/openapi";
import { messagingErrors, SessionParamSchema } from "./messages";
import { accessibleSession, callSession } from "./sessions";

/**
 * Broadcast: answers at once, then the session's Durable Object sends to one recipient per alarm
 * with a random gap (durable-objects/messaging/broadcasts/broadcasts.ts; docs/broadcast-and-scheduler.md).
 */
export const broadcastsRoutes = createRouter();
const tags = ["Broadcast"];

export const BROADCAST_MAX_RECIPIENTS = 1000;
export const BROADCAST_MAX_TEXT = 4096;
/** How many invalid JIDs a 400 names before summarising the rest. */
const LISTED_INVALID = 20;

/**
 * Validates and de-duplicates the recipients (first occurrence wins), then starts the job. Shared by
 * `POST /messages/{sessionId}/broadcast` and the deprecated `POST /messages/broadcast`, whose `delay`
 * (`delayMs`) is waited on top of the random gap.
 */
export async function startBroadcast(
  c: Context<AppEnv>,
  session: Pick<SessionRow, "id">,
  recipients: readonly string[],
  message: string,
  delayMs?: number,
): Promise<{ broadcastId: string; total: number }> {
  const invalid = [...new Set(recipients.filter((jid) => !isChatJid(jid)))];
  if (invalid.length > 0) {
    const named = invalid.slice(0, LISTED_INVALID).join(", ");
    const more = invalid.length > LISTED_INVALID ? ` and ${invalid.length - LISTED_INVALID} more` : "";
    throw badRequest(
      `recipients: not a chat JID (<number>@s.whatsapp.net or <digits>@g.us): ${named}${more}`,
      { invalid },
    );
  }
  return callSession(c.env, session, "broadcast.start", {
    recipients: [...new Set(recipients)],
    message,
    createdBy: c.get("principal").user.id,
    ...(delayMs === undefined ? {} : { delayMs }),
  });
}

const BroadcastBodySchema = z
  .strictObject({
    recipients: z
      .array(z.string().max(160))
      .min(1)
      .max(BROADCAST_MAX_RECIPIENTS)
      .openapi({
        description: "Chat JIDs (people or groups); duplicates are sent once",
        example: ["628123456789@s.whatsapp.net"],
      }),
    message: z.string().min(1).max(BROADCAST_MAX_TEXT),
    delay: z.number().optional().openapi({
      description: "Accepted and ignored, as the spec says: the gap is always the random 10–20 s",
    }),
  })
  .openapi("BroadcastBody");

const BroadcastStartedSchema = z.object({
  status: z.literal(true),
  success: z.literal(true),
  message: z.string(),
  data: z.object({ broadcastId: z.string(), total: z.number().int() }),
});

const BroadcastSummarySchema = z
  .object({
    id: z.string(),
    message: z.string(),
    status: z.enum(["running", "completed", "cancelled"]),
    total: z.number().int(),
    sent: z.number().int(),
    failed: z.number().int(),
    pending: z.number().int(),
    createdAt: z.string(),
    finishedAt: z.string().nullable(),
    nextAt: z.string().nullable().openapi({ description: "When the next send is due (running only)" }),
    createdBy: z.string().nullable().openapi({
      description: "The user who started it: it sends only while they may operate the session",
    }),
    cancelReason: z.string().nullable().openapi({
      description: "Why the service cancelled it (the user who started it lost operator access)",
    }),
  })
  .openapi("Broadcast");

const BroadcastDetailSchema = BroadcastSummarySchema.extend({
  recipients: z.array(
    z.object({
      jid: z.string(),
      status: z.enum(["pending", "sent", "failed", "cancelled"]),
      messageId: z.string().openapi({ description: "Fixed before the first attempt; every retry reuses it" }),
      error: z.string().nullable(),
      attempts: z.number().int(),
      sentAt: z.string().nullable(),
    }),
  ),
}).openapi("BroadcastDetail");

const HistoryQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).default(0),
});

const BroadcastParamsSchema = SessionParamSchema.extend({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "id", in: "path" }, description: "The broadcastId" }),
});

broadcastsRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/broadcast",
    tags,
    summary: "Send one text to many recipients, in the background",
    description:
      "Answers at once; the session then sends to one recipient at a time with a random 10–20 s gap, " +
      "surviving restarts and bridge failover. Follow it with `GET …/broadcast/history/{id}`. " +
      "503 when the session is not connected at submit time.",
    security: authenticated,
    request: { params: SessionParamSchema, ...jsonBody(BroadcastBodySchema) },
    responses: { 200: json(BroadcastStartedSchema, "Started"), ...messagingErrors },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const { recipients, message } = c.req.valid("json");
    const data = await startBroadcast(c, session, recipients, message);
    return c.json({ status: true as const, success: true as const, message: "Broadcast started", data }, 200);
  },
);

broadcastsRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{sessionId}/broadcast/history",
    tags,
    summary: "Broadcasts of the session, newest first, with their progress",
    security: authenticated,
    request: { params: SessionParamSchema, query: HistoryQuerySchema },
    responses: {
      200: json(
        gatewayOk(z.array(BroadcastSummarySchema)).extend({
          total: z.number().int(),
          limit: z.number().int(),
          offset: z.number().int(),
        }),
        "Broadcasts",
      ),
      ...messagingErrors,
    },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const { limit, offset } = c.req.valid("query");
    const { items, total } = await callSession(c.env, session, "broadcast.list", { limit, offset });
    return c.json({ ...ok("Broadcast history", items), total, limit, offset }, 200);
  },
);

broadcastsRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{sessionId}/broadcast/history/{id}",
    tags,
    summary: "One broadcast with every recipient's status, error and message id",
    security: authenticated,
    request: { params: BroadcastParamsSchema },
    responses: { 200: json(gatewayOk(BroadcastDetailSchema), "The broadcast"), ...messagingErrors },
  }),
  async (c) => {
    const { sessionId, id } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    return c.json(ok("Broadcast retrieved", await callSession(c.env, session, "broadcast.get", { id })), 200);
  },
);

broadcastsRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/broadcast/{id}/cancel",
    tags,
    summary: "Stop a running broadcast; recipients not yet sent become `cancelled`",
    description: "Cancelling a cancelled broadcast changes nothing; a completed one answers 409.",
    security: authenticated,
    request: { params: BroadcastParamsSchema },
    responses: {
      200: json(gatewayOk(BroadcastSummarySchema), "Cancelled"),
      ...messagingErrors,
      409: errorResponse("The broadcast has already completed"),
    },
  }),
  async (c) => {
    const { sessionId, id } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    return c.json(
      ok("Broadcast cancelled", await callSession(c.env, session, "broadcast.cancel", { id })),
      200,
    );
  },
);
