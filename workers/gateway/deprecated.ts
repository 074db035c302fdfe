import { createRoute, z } from "@hono/zod-openapi";
import type { Context, Next } from "hono";
import { ChatJidSchema } from "../../bridge/src/protocol/messaging";
import { LEGACY_DELAY_MAX_MS, LEGACY_DELAY_MIN_MS } from "../../durable-objects/messaging/broadcasts/gap";
import type { AppEnv } from "../core/env";
import { ok } from "../http/envelope";
import { authenticated, createRouter, gatewayOk, json, jsonBody } from "../http/openapi";
import { startBroadcast } from "./broadcasts";
import {
  checkPoll,
  LocationBodyShape,
  locationContent,
  MentionsSchema,
  MessageInputSchema,
  MessageResourceSchema,
  messagingErrors,
  PollBodyShape,
  pollContent,
  toOutgoingContent,
} from "./messages";
import { accessibleSession, callSession } from "./sessions";

/**
 * The spec's deprecated endpoints: the session (and chat) travel in the body instead of the path.
 * Each behaves as its replacement, validates on its own terms, and says so in its headers:
 * `Deprecation` (RFC 9745, the date the replacement shipped), `Sunset` (RFC 8594) and a `Link` to
 * the successor.
 */
export const deprecatedRoutes = createRouter();
const tags = ["Deprecated"];

/** 2026-01-18, when the `/{sessionId}/…` paths replaced these. */
const DEPRECATED_AT = Date.UTC(2026, 0, 18) / 1000;
export const SUNSET = "Sun, 31 Jan 2027 00:00:00 GMT";

function deprecation(successor: (c: Context<AppEnv>) => string) {
  return async (c: Context<AppEnv>, next: Next) => {
    await next();
    c.res.headers.set("Deprecation", `@${DEPRECATED_AT}`);
    c.res.headers.set("Sunset", SUNSET);
    c.res.headers.set("Link", `<${successor(c)}>; rel="successor-version"`);
  };
}

const SessionIdField = z.string().min(1).max(64);
const pathOf = (...segments: string[]) => `/api/${segments.map(encodeURIComponent).join("/")}`;
/** The body is read once for validation; the successor link only names the resource shape. */
const genericSuccessor = (template: string) => () => template;

deprecatedRoutes.use("/chat/send", deprecation(genericSuccessor("/api/messages/{sessionId}/{jid}/send")));
deprecatedRoutes.use(
  "/chat/:sessionId/send",
  deprecation((c) => `${pathOf("messages", c.req.param("sessionId") ?? "")}/{jid}/send`),
);
deprecatedRoutes.use(
  "/messages/broadcast",
  deprecation(genericSuccessor("/api/messages/{sessionId}/broadcast")),
);
deprecatedRoutes.use("/messages/poll", deprecation(genericSuccessor("/api/messages/{sessionId}/{jid}/poll")));
deprecatedRoutes.use(
  "/messages/location",
  deprecation(genericSuccessor("/api/messages/{sessionId}/{jid}/location")),
);

const sentResponse = { 200: json(gatewayOk(MessageResourceSchema), "Sent"), ...messagingErrors };

async function sendFromBody(
  c: Context<AppEnv>,
  body: {
    sessionId: string;
    jid: string;
    message: z.infer<typeof MessageInputSchema>;
    mentions?: string[] | undefined;
  },
) {
  const session = await accessibleSession(c, body.sessionId);
  return callSession(c.env, session, "message.send", {
    to: body.jid,
    content: toOutgoingContent(body.message, body.mentions),
  });
}

deprecatedRoutes.openapi(
  createRoute({
    method: "post",
    path: "/chat/send",
    tags,
    deprecated: true,
    summary: "Deprecated: use POST /messages/{sessionId}/{jid}/send",
    security: authenticated,
    request: jsonBody(
      z.strictObject({
        sessionId: SessionIdField,
        jid: ChatJidSchema,
        message: MessageInputSchema,
        mentions: MentionsSchema,
      }),
    ),
    responses: sentResponse,
  }),
  async (c) => c.json(ok("Message sent successfully", await sendFromBody(c, c.req.valid("json"))), 200),
);

deprecatedRoutes.openapi(
  createRoute({
    method: "post",
    path: "/chat/{sessionId}/send",
    tags,
    deprecated: true,
    summary: "Deprecated: use POST /messages/{sessionId}/{jid}/send",
    security: authenticated,
    request: {
      params: z.object({ sessionId: SessionIdField }),
      ...jsonBody(
        z.strictObject({ jid: ChatJidSchema, message: MessageInputSchema, mentions: MentionsSchema }),
      ),
    },
    responses: sentResponse,
  }),
  async (c) => {
    const body = { ...c.req.valid("json"), sessionId: c.req.valid("param").sessionId };
    return c.json(ok("Message sent successfully", await sendFromBody(c, body)), 200);
  },
);

deprecatedRoutes.openapi(
  createRoute({
    method: "post",
    path: "/messages/broadcast",
    tags,
    deprecated: true,
    summary: "Deprecated: use POST /messages/{sessionId}/broadcast",
    description:
      "`delay` (500–60000 ms, default 2000; outside that range a 400) is waited between recipients on top " +
      "of the broadcast job's random 10–20 s anti-ban gap, so each gap is delay + 10–20 s.",
    security: authenticated,
    request: jsonBody(
      z.strictObject({
        sessionId: SessionIdField,
        recipients: z.array(ChatJidSchema).min(1).max(1000),
        message: z.string().min(1).max(4096),
        delay: z
          .number()
          .int()
          .min(LEGACY_DELAY_MIN_MS)
          .max(LEGACY_DELAY_MAX_MS)
          .default(2000)
          .openapi({ description: "ms waited between recipients, on top of the random 10–20 s" }),
      }),
    ),
    responses: {
      200: json(gatewayOk(z.object({ broadcastId: z.string(), total: z.number() })), "Started"),
      ...messagingErrors,
    },
  }),
  async (c) => {
    const { sessionId, recipients, message, delay } = c.req.valid("json");
    const session = await accessibleSession(c, sessionId);
    const started = await startBroadcast(c, session, recipients, message, delay);
    return c.json(ok("Broadcast started", started), 200);
  },
);

deprecatedRoutes.openapi(
  createRoute({
    method: "post",
    path: "/messages/poll",
    tags,
    deprecated: true,
    summary: "Deprecated: use POST /messages/{sessionId}/{jid}/poll",
    security: authenticated,
    request: jsonBody(
      z
        .strictObject({ sessionId: SessionIdField, jid: ChatJidSchema, ...PollBodyShape })
        .superRefine(checkPoll),
    ),
    responses: sentResponse,
  }),
  async (c) => {
    const { sessionId, jid, ...poll } = c.req.valid("json");
    const session = await accessibleSession(c, sessionId);
    const message = await callSession(c.env, session, "message.send", {
      to: jid,
      content: pollContent(poll),
    });
    return c.json({ ...ok("Poll sent successfully", message), success: true as const }, 200);
  },
);

deprecatedRoutes.openapi(
  createRoute({
    method: "post",
    path: "/messages/location",
    tags,
    deprecated: true,
    summary: "Deprecated: use POST /messages/{sessionId}/{jid}/location",
    security: authenticated,
    request: jsonBody(
      z.strictObject({ sessionId: SessionIdField, jid: ChatJidSchema, ...LocationBodyShape }),
    ),
    responses: sentResponse,
  }),
  async (c) => {
    const { sessionId, jid, ...location } = c.req.valid("json");
    const session = await accessibleSession(c, sessionId);
    const message = await callSession(c.env, session, "message.send", {
      to: jid,
      content: locationContent(location),
    });
    return c.json({ ...ok("Location sent successfully", message), success: true as const }, 200);
  },
);
