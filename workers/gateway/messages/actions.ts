import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ChatJidSchema } from "../../../bridge/src/protocol/messaging";
import type { MESSAGE_TYPES } from "../../../durable-objects/messaging/messages/store";
import type { AppEnv } from "../../core/env";
import { ok } from "../../http/envelope";
import { authenticated, createRouter, gatewayOk, json, jsonBody } from "../../http/openapi";
import { accessibleSession, callSession } from "../sessions";
import {
  ChatParamsSchema,
  MessageParamsSchema,
  MessageResourceSchema,
  messagingErrors,
  ReactBodySchema,
  SearchQuerySchema,
  SessionParamSchema,
} from "./schemas";
import { MentionsSchema, MessageInputSchema, toOutgoingContent } from "./send-content";

/** Acting on stored messages: react, reply, star, edit, delete for everyone, forward, search, download. */
export const messageActionRoutes = createRouter();
const tags = ["Messages"];
const done = json(gatewayOk(z.null()), "Done");

messageActionRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/{jid}/{messageId}/react",
    tags,
    summary: "React with an emoji (an empty string removes the reaction)",
    security: authenticated,
    request: { params: MessageParamsSchema, ...jsonBody(ReactBodySchema) },
    responses: { 200: done, ...messagingErrors },
  }),
  async (c) => {
    const { sessionId, jid, messageId } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    await callSession(c.env, session, "message.react", { chat: jid, messageId, ...c.req.valid("json") });
    return c.json(ok("Reaction sent", null), 200);
  },
);

const ReplyShape = {
  message: z.union([z.string().min(1).max(65_536), MessageInputSchema]),
  mentions: MentionsSchema,
};

async function reply(
  c: Context<AppEnv>,
  ids: { sessionId: string; jid: string; messageId: string },
  body: { message: string | z.infer<typeof MessageInputSchema>; mentions?: string[] | undefined },
) {
  const session = await accessibleSession(c, ids.sessionId);
  const input = typeof body.message === "string" ? { text: body.message } : body.message;
  return callSession(c.env, session, "message.send", {
    to: ids.jid,
    content: toOutgoingContent(input, body.mentions),
    quotedId: ids.messageId,
  });
}

messageActionRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/{jid}/{messageId}/reply",
    tags,
    summary: "Reply to a message (quoting it)",
    security: authenticated,
    request: { params: MessageParamsSchema, ...jsonBody(z.strictObject(ReplyShape)) },
    responses: { 200: json(gatewayOk(MessageResourceSchema), "Sent"), ...messagingErrors },
  }),
  async (c) => {
    const message = await reply(c, c.req.valid("param"), c.req.valid("json"));
    return c.json(ok("Message sent successfully", message), 200);
  },
);

messageActionRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/{jid}/reply",
    tags,
    summary: "Reply to a message named in the body",
    security: authenticated,
    request: {
      params: ChatParamsSchema,
      ...jsonBody(z.strictObject({ ...ReplyShape, messageId: z.string().min(1).max(128) })),
    },
    responses: { 200: json(gatewayOk(MessageResourceSchema), "Sent"), ...messagingErrors },
  }),
  async (c) => {
    const { messageId, ...body } = c.req.valid("json");
    const message = await reply(c, { ...c.req.valid("param"), messageId }, body);
    return c.json(ok("Message sent successfully", message), 200);
  },
);

messageActionRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/{jid}/{messageId}/star",
    tags,
    summary: "Star or unstar a message",
    security: authenticated,
    request: {
      params: MessageParamsSchema,
      ...jsonBody(z.strictObject({ star: z.boolean().default(true) })),
    },
    responses: { 200: done, ...messagingErrors },
  }),
  async (c) => {
    const { sessionId, jid, messageId } = c.req.valid("param");
    const { star } = c.req.valid("json");
    const session = await accessibleSession(c, sessionId);
    await callSession(c.env, session, "message.star", { chat: jid, messageId, star });
    return c.json(ok(star ? "Message starred" : "Message unstarred", null), 200);
  },
);

messageActionRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{sessionId}/{jid}/{messageId}",
    tags,
    summary: "One stored message; a poll with its current votes (`poll`: each option with its voters)",
    description: "Answers from the session's store: WhatsApp need not be connected.",
    security: authenticated,
    request: { params: MessageParamsSchema },
    responses: { 200: json(gatewayOk(MessageResourceSchema), "The message"), ...messagingErrors },
  }),
  async (c) => {
    const { sessionId, jid, messageId } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const message = await callSession(c.env, session, "message.get", { chat: jid, messageId });
    return c.json(ok("Message found", message), 200);
  },
);

messageActionRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/{sessionId}/{jid}/{messageId}",
    tags,
    summary: "Delete a message for everyone",
    description: "WhatsApp refuses messages older than about two days: that answers 400.",
    security: authenticated,
    request: { params: MessageParamsSchema },
    responses: { 200: done, ...messagingErrors },
  }),
  async (c) => {
    const { sessionId, jid, messageId } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    await callSession(c.env, session, "message.delete", { chat: jid, messageId });
    return c.json(ok("Message deleted for everyone", null), 200);
  },
);

messageActionRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/{sessionId}/{jid}/{messageId}",
    tags,
    summary: "Edit one of your own messages (WhatsApp allows 15 minutes)",
    security: authenticated,
    request: {
      params: MessageParamsSchema,
      ...jsonBody(z.strictObject({ text: z.string().min(1).max(65_536) })),
    },
    responses: { 200: json(gatewayOk(MessageResourceSchema), "Edited"), ...messagingErrors },
  }),
  async (c) => {
    const { sessionId, jid, messageId } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const message = await callSession(c.env, session, "message.edit", {
      chat: jid,
      messageId,
      text: c.req.valid("json").text,
    });
    return c.json(ok("Message edited successfully", message), 200);
  },
);

messageActionRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/forward",
    tags,
    summary: "Forward a stored message to one or more chats",
    security: authenticated,
    request: {
      params: SessionParamSchema,
      ...jsonBody(
        z.strictObject({
          fromJid: ChatJidSchema,
          messageId: z.string().min(1).max(128),
          toJids: z.array(ChatJidSchema).min(1).max(50),
        }),
      ),
    },
    responses: {
      200: json(gatewayOk(z.object({ forwarded: z.array(MessageResourceSchema) })), "Forwarded"),
      ...messagingErrors,
    },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const result = await callSession(c.env, session, "message.forward", c.req.valid("json"));
    return c.json(ok(`Message forwarded to ${result.forwarded.length} recipient(s)`, result), 200);
  },
);

messageActionRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{sessionId}/search",
    tags,
    summary: "Search stored messages by text, chat, type and direction",
    security: authenticated,
    request: { params: SessionParamSchema, query: SearchQuerySchema },
    responses: {
      200: json(
        gatewayOk(z.array(MessageResourceSchema)).extend({
          pagination: z.object({ total: z.number(), page: z.number(), limit: z.number(), pages: z.number() }),
        }),
        "Matches, newest first",
      ),
      ...messagingErrors,
    },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const { fromMe, type, ...query } = c.req.valid("query");
    const result = await callSession(c.env, session, "message.search", {
      ...query,
      ...(type ? { type: type as (typeof MESSAGE_TYPES)[keyof typeof MESSAGE_TYPES] } : {}),
      ...(fromMe ? { fromMe: fromMe === "true" } : {}),
    });
    const pages = Math.ceil(result.total / query.limit);
    return c.json(
      {
        ...ok("Messages found", result.items),
        pagination: { total: result.total, page: query.page, limit: query.limit, pages },
      },
      200,
    );
  },
);
