import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { MEDIA_MAX_BYTES, type OutgoingContent } from "../../../bridge/src/protocol/messaging";
import type { AppEnv } from "../../core/env";
import { ok } from "../../http/envelope";
import { ApiError, badRequest } from "../../http/errors";
import { authenticated, createRouter, errorResponse, gatewayOk, json, jsonBody } from "../../http/openapi";
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

/** Sending: every message type to one chat. Actions on sent messages live in actions.ts. */
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

const MEDIA_KINDS = ["image", "video", "audio", "voice", "document", "sticker"] as const;
const MediaFormSchema = z.object({
  file: z
    .custom<File>((value) => value instanceof File, { message: "file is required" })
    .openapi({ type: "string", format: "binary", description: `At most ${MEDIA_MAX_BYTES} bytes` }),
  type: z.enum(MEDIA_KINDS).default("image"),
  caption: z.string().max(4096).optional(),
});

messagesRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/{jid}/media",
    tags,
    summary: "Upload and send a media file (multipart/form-data)",
    description: `\`voice\` is sent as a voice note. Files above ${MEDIA_MAX_BYTES} bytes (16 MiB) answer 413.`,
    security: authenticated,
    request: {
      params: ChatParamsSchema,
      body: { content: { "multipart/form-data": { schema: MediaFormSchema } }, required: true },
    },
    responses: {
      200: sent("Sent"),
      ...messagingErrors,
      413: errorResponse("File larger than 16 MiB"),
      415: errorResponse("Not multipart/form-data"),
    },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const form = await readMediaForm(c.req.header("content-type"), () => c.req.parseBody());
    const message = await callSession(c.env, session, "message.sendUpload", { to: jid, ...form });
    return c.json(ok("Media sent successfully", message), 200);
  },
);

type FormFields = Record<string, string | File | (string | File)[]>;

async function readMediaForm(contentType: string | undefined, parse: () => Promise<FormFields>) {
  if (!(contentType ?? "").startsWith("multipart/form-data")) {
    throw new ApiError(415, "Unsupported Media Type", "Send the file as multipart/form-data");
  }
  let form: FormFields;
  try {
    form = await parse();
  } catch {
    throw badRequest("Malformed multipart body");
  }
  const file = form.file;
  if (!(file instanceof File)) throw badRequest("file is required");
  if (file.size === 0) throw badRequest("file is empty");
  if (file.size > MEDIA_MAX_BYTES)
    throw new ApiError(413, "Payload Too Large", `file exceeds ${MEDIA_MAX_BYTES} bytes`);
  const kind = String(form.type ?? "image");
  if (!(MEDIA_KINDS as readonly string[]).includes(kind))
    throw badRequest(`type must be one of ${MEDIA_KINDS.join(", ")}`);
  const caption = form.caption;
  if (caption !== undefined && (typeof caption !== "string" || caption.length > 4096))
    throw badRequest("caption must be text of at most 4096 characters");
  return {
    kind: kind as (typeof MEDIA_KINDS)[number],
    bytes: new Uint8Array(await file.arrayBuffer()),
    mimetype: file.type || "application/octet-stream",
    fileName: file.name || "file",
    ...(caption ? { caption } : {}),
  };
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
