import { createRoute, z } from "@hono/zod-openapi";
import { AUTO_REPLY_MEDIA_TYPES } from "../../durable-objects/messaging/bot/auto-replies";
import { REGEX_MAX_LENGTH, REGEX_MAX_PROGRAM_SIZE } from "../../durable-objects/messaging/bot/regex";
import { MATCH_TYPES, TRIGGER_TYPES } from "../../durable-objects/messaging/bot/rules";
import { ok } from "../http/envelope";
import {
  authenticated,
  createRouter,
  errorResponse,
  gatewayErrors,
  gatewayOk,
  json,
  jsonBody,
} from "../http/openapi";
import { SessionParamSchema } from "./messages";
import { accessibleSession, callSession } from "./sessions";

/**
 * Keyword auto-reply rules of a session (mounted at /api/autoreplies). The rules live in the
 * session's Durable Object, next to the messages they answer; this router validates and forwards.
 */
export const autoRepliesRoutes = createRouter();
const tags = ["Auto-replies"];

const ReplyParamsSchema = SessionParamSchema.extend({
  replyId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "replyId", in: "path" }, description: "The rule's `id`" }),
});

const fields = {
  keyword: z
    .string()
    .min(1)
    .max(1000)
    .openapi({
      description:
        `The text to look for; a REGEX keyword is at most ${REGEX_MAX_LENGTH} characters and may ` +
        `compile to at most ${REGEX_MAX_PROGRAM_SIZE} RE2 instructions (counted repeats multiply them)`,
    }),
  response: z
    .string()
    .min(1)
    .max(4096)
    .nullable()
    .openapi({ description: "Reply text; with media it is the caption (not allowed for audio)" }),
  matchType: z.enum(MATCH_TYPES).openapi({
    description:
      "How `keyword` is compared with the lowercased message: whole text, substring, prefix, or a " +
      "case-insensitive regular expression (RE2: no lookaround or backreferences; each message's " +
      "rules share a time budget, past which the rest are skipped)",
  }),
  triggerType: z
    .enum(TRIGGER_TYPES)
    .openapi({ description: "Which chats: all, groups only, or direct chats only" }),
  isMedia: z
    .boolean()
    .openapi({ description: "Accepted for compatibility; derived from `mediaUrl`, and must agree with it" }),
  mediaUrl: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .nullable(),
  mediaType: z.enum(AUTO_REPLY_MEDIA_TYPES).nullable().openapi({ description: "Required with `mediaUrl`" }),
  enabled: z.boolean(),
};

const CreateAutoReplyBodySchema = z
  .strictObject({
    ...fields,
    matchType: fields.matchType.optional().openapi({ description: "Default EXACT (as the reference)" }),
    triggerType: fields.triggerType.optional().openapi({ description: "Default ALL" }),
    response: fields.response.optional(),
    isMedia: fields.isMedia.optional(),
    mediaUrl: fields.mediaUrl.optional(),
    mediaType: fields.mediaType.optional(),
    enabled: fields.enabled.optional().openapi({ description: "Default true" }),
  })
  .openapi("CreateAutoReplyBody");

const UpdateAutoReplyBodySchema = z
  .strictObject(fields)
  .partial()
  .refine((body) => Object.keys(body).length > 0, { message: "Send at least one field to change" })
  .openapi("UpdateAutoReplyBody");

const AutoReplySchema = z
  .object({
    id: z.string(),
    keyword: z.string(),
    matchType: z.enum(MATCH_TYPES),
    triggerType: z.enum(TRIGGER_TYPES),
    response: z.string().nullable(),
    isMedia: z.boolean(),
    mediaUrl: z.string().nullable(),
    mediaType: z.enum(AUTO_REPLY_MEDIA_TYPES).nullable(),
    enabled: z.boolean(),
    disabledReason: z.string().nullable().openapi({
      description:
        "Why the service turned the rule off (its creator lost operator access); cleared when turned on",
    }),
    createdBy: z.string().nullable().openapi({
      description:
        "The user who created or last changed the rule: it answers only while they may operate the session",
    }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("AutoReply");

const errors = {
  ...gatewayErrors,
  400: errorResponse(
    "Invalid body: unknown fields, an invalid or unsafe regex, or media fields that disagree",
  ),
  403: errorResponse("Forbidden - Cannot access this session"),
  404: errorResponse("Session or auto-reply not found"),
} as const;

autoRepliesRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{sessionId}",
    tags,
    summary: "The session's auto-reply rules, newest first",
    security: authenticated,
    request: { params: SessionParamSchema },
    responses: { 200: json(gatewayOk(z.array(AutoReplySchema)), "Rules"), ...errors },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    return c.json(ok("Auto-replies retrieved", await callSession(c.env, session, "autoReply.list", {})), 200);
  },
);

autoRepliesRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}",
    tags,
    summary: "Add a rule",
    description:
      "Needs `response`, or `mediaUrl` with `mediaType` (or both: the text becomes the caption). When " +
      "several rules match a message, the oldest answers, once.",
    security: authenticated,
    request: { params: SessionParamSchema, ...jsonBody(CreateAutoReplyBodySchema) },
    responses: { 200: json(gatewayOk(AutoReplySchema), "The new rule"), ...errors },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const rule = await callSession(c.env, session, "autoReply.create", {
      ...c.req.valid("json"),
      createdBy: c.get("principal").user.id,
    });
    return c.json(ok("Auto-reply created", rule), 200);
  },
);

autoRepliesRoutes.openapi(
  createRoute({
    method: "put",
    path: "/{sessionId}/{replyId}",
    tags,
    summary: "Change a rule; omitted fields keep their value, null clears response or media",
    security: authenticated,
    request: { params: ReplyParamsSchema, ...jsonBody(UpdateAutoReplyBodySchema) },
    responses: { 200: json(gatewayOk(AutoReplySchema), "The updated rule"), ...errors },
  }),
  async (c) => {
    const { sessionId, replyId } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const rule = await callSession(c.env, session, "autoReply.update", {
      ...c.req.valid("json"),
      id: replyId,
      by: c.get("principal").user.id,
    });
    return c.json(ok("Auto-reply updated", rule), 200);
  },
);

autoRepliesRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/{sessionId}/{replyId}",
    tags,
    summary: "Delete a rule",
    security: authenticated,
    request: { params: ReplyParamsSchema },
    responses: { 200: json(gatewayOk(z.null()), "Deleted"), ...errors },
  }),
  async (c) => {
    const { sessionId, replyId } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    await callSession(c.env, session, "autoReply.delete", { id: replyId });
    return c.json(ok("Auto-reply deleted", null), 200);
  },
);
