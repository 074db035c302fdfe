import { createRoute, z } from "@hono/zod-openapi";
import { LID_JID, PERSON_JID, PRESENCES } from "../../bridge/src/protocol/messaging";
import { ok } from "../http/envelope";
import { badRequest } from "../http/errors";
import { authenticated, createRouter, errorResponse, gatewayOk, json, jsonBody } from "../http/openapi";
import { ChatListQuerySchema, CheckNumbersBodySchema, HistoryQuerySchema } from "./chat-schemas";
import { ChatParamsSchema, MessageResourceSchema, messagingErrors, SessionParamSchema } from "./messages";
import { accessibleSession, callSession } from "./sessions";

/** Chats: the list, history with cursor paging, the batched number check, and chat-level actions. */
export const chatsRoutes = createRouter();
const tags = ["Chats"];

const ChatSchema = z
  .object({
    jid: z.string(),
    name: z.string().nullable(),
    isGroup: z.boolean(),
    unreadCount: z.number().int(),
    archived: z.boolean(),
    pinned: z.boolean(),
    mutedUntil: z.string().nullable(),
    lastMessage: z
      .object({
        content: z.string().nullable(),
        type: z.string(),
        timestamp: z.string(),
        fromMe: z.boolean(),
      })
      .nullable(),
  })
  .openapi("Chat");

chatsRoutes.openapi(
  createRoute({
    method: "get",
    path: "/chat/{sessionId}",
    tags,
    summary: "Chats with their last message, pinned first, then most recent",
    security: authenticated,
    request: {
      params: SessionParamSchema,
      query: ChatListQuerySchema,
    },
    responses: { 200: json(gatewayOk(z.array(ChatSchema)), "Chats"), ...messagingErrors },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const chats = await callSession(c.env, session, "chat.list", c.req.valid("query"));
    return c.json(ok("Chats retrieved", chats), 200);
  },
);

chatsRoutes.openapi(
  createRoute({
    method: "get",
    path: "/chat/{sessionId}/{jid}",
    tags,
    summary: "Message history: the newest 100, oldest → newest; `before` pages further back",
    description:
      "`pagination.nextCursor` is null when nothing older exists; pass it as `before` for the previous page.",
    security: authenticated,
    request: {
      params: ChatParamsSchema,
      query: HistoryQuerySchema,
    },
    responses: {
      200: json(
        gatewayOk(z.array(MessageResourceSchema)).extend({
          pagination: z.object({ limit: z.number(), nextCursor: z.string().nullable() }),
        }),
        "Messages",
      ),
      ...messagingErrors,
    },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const { limit, before } = c.req.valid("query");
    const session = await accessibleSession(c, sessionId);
    const page = await callSession(c.env, session, "chat.history", {
      chat: jid,
      limit,
      before: before ?? null,
    });
    return c.json(
      { ...ok("Messages retrieved", page.items), pagination: { limit, nextCursor: page.nextCursor } },
      200,
    );
  },
);

/** Digits with the country code, from `+62 812-345`, `62812345` or `62812345@s.whatsapp.net`. */
export function normalizeNumber(input: string): string | null {
  const bare = input
    .trim()
    .replace(/@s\.whatsapp\.net$/, "")
    .replace(/[\s\-().+]/g, "");
  return /^\d{5,20}$/.test(bare) ? bare : null;
}

const CheckResultSchema = z.object({
  number: z.string(),
  exists: z.boolean(),
  jid: z.string().nullable(),
  error: z.string().optional(),
});

chatsRoutes.openapi(
  createRoute({
    method: "post",
    path: "/chat/{sessionId}/check",
    tags,
    summary: "Which numbers are on WhatsApp (up to 50, one batched lookup)",
    security: authenticated,
    request: {
      params: SessionParamSchema,
      ...jsonBody(CheckNumbersBodySchema),
    },
    responses: {
      200: json(gatewayOk(z.object({ results: z.array(CheckResultSchema) })), "One result per input"),
      ...messagingErrors,
    },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const inputs = c.req.valid("json").numbers;
    const normalized = inputs.map(normalizeNumber);
    const valid = [...new Set(normalized.filter((n): n is string => n !== null))];
    const found =
      valid.length === 0 ? [] : await callSession(c.env, session, "numbers.check", { numbers: valid });
    const byNumber = new Map(found.map((result) => [result.number.replace(/\D/g, ""), result]));
    const results = inputs.map((input, i) => {
      const number = normalized[i];
      if (!number) return { number: input, exists: false, jid: null, error: "Invalid number format" };
      const hit = byNumber.get(number);
      return { number: input, exists: hit?.exists ?? false, jid: hit?.exists ? hit.jid : null };
    });
    return c.json(ok("Numbers checked", { results }), 200);
  },
);

chatsRoutes.openapi(
  createRoute({
    method: "put",
    path: "/chat/{sessionId}/{jid}/read",
    tags,
    summary: "Mark messages read (the given ids, or the chat's latest received ones)",
    security: authenticated,
    request: {
      params: ChatParamsSchema,
      ...jsonBody(
        z.strictObject({ messageIds: z.array(z.string().min(1).max(128)).min(1).max(1000).optional() }),
      ),
    },
    responses: { 200: json(gatewayOk(z.object({ read: z.number() })), "Marked"), ...messagingErrors },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const result = await callSession(c.env, session, "chat.read", { chat: jid, ...c.req.valid("json") });
    return c.json(ok("Messages marked as read", result), 200);
  },
);

const ChatStateSchema = z.object({ mutedUntil: z.string().nullable() });

function chatToggleRoute(
  name: "archive" | "pin",
  summary: string,
  action: (on: boolean) => "archive" | "unarchive" | "pin" | "unpin",
) {
  chatsRoutes.openapi(
    createRoute({
      method: "put",
      path: `/chat/{sessionId}/{jid}/${name}`,
      tags,
      summary,
      security: authenticated,
      request: { params: ChatParamsSchema, ...jsonBody(z.strictObject({ [name]: z.boolean() })) },
      responses: { 200: json(gatewayOk(ChatStateSchema), "Done"), ...messagingErrors },
    }),
    async (c) => {
      const { sessionId, jid } = c.req.valid("param");
      const on = (c.req.valid("json") as Record<string, boolean>)[name] === true;
      const session = await accessibleSession(c, sessionId);
      const result = await callSession(c.env, session, "chat.modify", { chat: jid, action: action(on) });
      return c.json(ok(`Chat ${action(on)}d`, result), 200);
    },
  );
}

chatToggleRoute("archive", "Archive or unarchive a chat", (on) => (on ? "archive" : "unarchive"));
chatToggleRoute("pin", "Pin or unpin a chat", (on) => (on ? "pin" : "unpin"));

chatsRoutes.openapi(
  createRoute({
    method: "put",
    path: "/chat/{sessionId}/{jid}/mute",
    tags,
    summary: "Mute (for `duration` seconds, default 8 hours) or unmute a chat",
    security: authenticated,
    request: {
      params: ChatParamsSchema,
      ...jsonBody(
        z.strictObject({
          mute: z.boolean(),
          duration: z
            .number()
            .int()
            .min(60)
            .max(366 * 86_400)
            .optional(),
        }),
      ),
    },
    responses: { 200: json(gatewayOk(ChatStateSchema), "Done"), ...messagingErrors },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const { mute, duration } = c.req.valid("json");
    const session = await accessibleSession(c, sessionId);
    const result = await callSession(c.env, session, "chat.modify", {
      chat: jid,
      action: mute ? "mute" : "unmute",
      ...(duration !== undefined ? { muteSeconds: duration } : {}),
    });
    return c.json(ok(mute ? "Chat muted" : "Chat unmuted", result), 200);
  },
);

chatsRoutes.openapi(
  createRoute({
    method: "post",
    path: "/chat/{sessionId}/{jid}/presence",
    tags,
    summary: "Show typing, recording, paused, available or unavailable in a chat",
    security: authenticated,
    request: { params: ChatParamsSchema, ...jsonBody(z.strictObject({ presence: z.enum(PRESENCES) })) },
    responses: { 200: json(gatewayOk(z.null()), "Sent"), ...messagingErrors },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const { presence } = c.req.valid("json");
    const session = await accessibleSession(c, sessionId);
    await callSession(c.env, session, "chat.presence", { chat: jid, presence });
    return c.json(ok(`Presence '${presence}' sent to ${jid}`, null), 200);
  },
);

chatsRoutes.openapi(
  createRoute({
    method: "post",
    path: "/chat/{sessionId}/{jid}/presence/subscribe",
    tags,
    summary: "Follow a contact's presence: online, last seen, typing and recording arrive as presence.update",
    description:
      "`jid` is a person (`<number>@s.whatsapp.net` or `<digits>@lid`); 400 for a group. WhatsApp keeps a " +
      "subscription only for the connection that made it: the session remembers it and subscribes again " +
      "each time it connects. At most 500 contacts per session (409 beyond).",
    security: authenticated,
    request: { params: ChatParamsSchema },
    responses: {
      200: json(gatewayOk(z.null()), "Subscribed"),
      ...messagingErrors,
      409: errorResponse("The session already follows the most contacts it may"),
    },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    if (!PERSON_JID.test(jid) && !LID_JID.test(jid)) {
      throw badRequest("jid must be a person: <number>@s.whatsapp.net or <digits>@lid");
    }
    const session = await accessibleSession(c, sessionId);
    await callSession(c.env, session, "chat.presence.subscribe", { jid });
    return c.json(ok(`Subscribed to the presence of ${jid}`, null), 200);
  },
);

chatsRoutes.openapi(
  createRoute({
    method: "post",
    path: "/chat/{sessionId}/{jid}/profile-picture",
    tags,
    summary: "The chat's profile picture URL (null when hidden or unset)",
    security: authenticated,
    request: { params: ChatParamsSchema },
    responses: {
      200: json(gatewayOk(z.object({ jid: z.string(), profilePicUrl: z.string().nullable() })), "Picture"),
      ...messagingErrors,
    },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const { url } = await callSession(c.env, session, "chat.picture", { jid });
    return c.json(ok(url ? "Profile picture found" : "No profile picture", { jid, profilePicUrl: url }), 200);
  },
);
