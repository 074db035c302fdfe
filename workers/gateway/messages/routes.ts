import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { OutgoingContent } from "../../../bridge/src/protocol/messaging";
import type { AppEnv } from "../../core/env";
import { ok } from "../../http/envelope";
import { authenticated, createRouter, gatewayOk, json, jsonBody } from "../../http/openapi";
import { accessibleSession, callSession } from "../sessions";
import { IdempotencyHeadersSchema, messageIdForKey } from "./idempotency";
import { ChatParamsSchema, MessageResourceSchema, messagingErrors } from "./schemas";
import {
  ContactBodyShape,
  LocationBodyShape,
  locationContent,
  PollBodySchema,
  pollContent,
  SendBodySchema,
  toOutgoingContent,
} from "./send-content";

/** Sending: every message type to one chat. Uploads are media-routes.ts, actions on sent messages actions.ts. */
export const messagesRoutes = createRouter();
const tags = ["Messages"];
const sent = (description: string) => json(gatewayOk(MessageResourceSchema), description);
const sentFlagged = (description: string) =>
  json(gatewayOk(MessageResourceSchema).extend({ success: z.literal(true) }), description);

messagesRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/{jid}/send",
    tags,
    summary: "Send text (with mentions), image, video, audio, voice, document or sticker; optionally quoting",
    security: authenticated,
    request: { params: ChatParamsSchema, headers: IdempotencyHeadersSchema, ...jsonBody(SendBodySchema) },
    responses: { 200: sent("Sent; data is the stored message"), ...messagingErrors },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const body = c.req.valid("json");
    const session = await accessibleSession(c, sessionId);
    const messageId = await messageIdForKey(session.id, c.req.valid("header")["idempotency-key"]);
    const message = await callSession(c.env, session, "message.send", {
      to: jid,
      content: toOutgoingContent(body.message, body.mentions),
      ...(body.quotedMessageId ? { quotedId: body.quotedMessageId } : {}),
      ...(messageId ? { messageId } : {}),
    });
    return c.json(ok("Message sent successfully", message), 200);
  },
);

/**
 * Sends `content` to the path's chat on the path's session; answers the stored message. An
 * Idempotency-Key makes a retry the same message (idempotency.ts).
 */
async function sendToChat(
  c: Context<AppEnv>,
  chat: { sessionId: string; jid: string },
  content: OutgoingContent,
) {
  const session = await accessibleSession(c, chat.sessionId);
  const messageId = await messageIdForKey(session.id, c.req.header("Idempotency-Key"));
  return callSession(c.env, session, "message.send", {
    to: chat.jid,
    content,
    ...(messageId ? { messageId } : {}),
  });
}

messagesRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/{jid}/poll",
    tags,
    summary: "Send a poll (2–12 distinct options; selectableCount 1..options)",
    security: authenticated,
    request: { params: ChatParamsSchema, headers: IdempotencyHeadersSchema, ...jsonBody(PollBodySchema) },
    responses: { 200: sentFlagged("Sent"), ...messagingErrors },
  }),
  async (c) => {
    const message = await sendToChat(c, c.req.valid("param"), pollContent(c.req.valid("json")));
    return c.json({ ...ok("Poll sent successfully", message), success: true as const }, 200);
  },
);

messagesRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/{jid}/location",
    tags,
    summary: "Send a location (latitude −90..90, longitude −180..180)",
    security: authenticated,
    request: {
      params: ChatParamsSchema,
      headers: IdempotencyHeadersSchema,
      ...jsonBody(z.strictObject(LocationBodyShape)),
    },
    responses: { 200: sentFlagged("Sent"), ...messagingErrors },
  }),
  async (c) => {
    const message = await sendToChat(c, c.req.valid("param"), locationContent(c.req.valid("json")));
    return c.json({ ...ok("Location sent successfully", message), success: true as const }, 200);
  },
);

messagesRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/{jid}/contact",
    tags,
    summary: "Send contact cards (vCards)",
    security: authenticated,
    request: {
      params: ChatParamsSchema,
      headers: IdempotencyHeadersSchema,
      ...jsonBody(z.strictObject(ContactBodyShape)),
    },
    responses: { 200: sentFlagged("Sent"), ...messagingErrors },
  }),
  async (c) => {
    const message = await sendToChat(c, c.req.valid("param"), {
      type: "contacts",
      contacts: c.req.valid("json").contacts,
    });
    return c.json({ ...ok("Contact sent successfully", message), success: true as const }, 200);
  },
);

const ListBodySchema = z.strictObject({
  title: z.string().min(1).max(256),
  options: z.array(z.string().min(1).max(100)).min(1).max(10),
  footer: z.string().max(256).optional(),
});

messagesRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/{jid}/list",
    tags,
    summary: "Send a list of options",
    description:
      "WhatsApp no longer delivers interactive list messages sent from linked devices, so the list " +
      "is sent as formatted text (title, numbered options, footer) that every client shows.",
    security: authenticated,
    request: { params: ChatParamsSchema, ...jsonBody(ListBodySchema) },
    responses: { 200: sent("Sent"), ...messagingErrors },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const { title, options, footer } = c.req.valid("json");
    const lines = [`*${title}*`, ...options.map((option, i) => `${i + 1}. ${option}`)];
    if (footer) lines.push("", `_${footer}_`);
    const message = await callSession(c.env, session, "message.send", {
      to: jid,
      content: { type: "text", text: lines.join("\n") },
    });
    return c.json(ok("List sent successfully", message), 200);
  },
);
