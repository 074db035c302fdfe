import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { MESSAGE_STATUSES, PRESENCES } from "../../../bridge/src/protocol/messaging";
import { WEBHOOK_EVENTS, type WebhookEvent } from "../../../durable-objects/messaging/context";
import type { AppEnv } from "../../core/env";
import { SESSION_STATES, SESSION_STATUSES } from "../../db/schema";
import { GroupSchema } from "../groups";
import { MessageResourceSchema } from "../messages";
import { SessionLimitsSchema } from "../sessions";
import { APP_STATE_EVENT_DOCS } from "./app-state-events";
import { ALL_EVENTS } from "./schemas";
import { TEST_EVENT } from "./test-delivery";

/**
 * What each delivery carries, for the OpenAPI document: one schema and one example per event, as the
 * SessionDO emits them (durable-objects/session/: network-events.ts, messaging.ts; durable-objects/messaging/:
 * messages/api.ts, messages/send.ts, groups/table.ts, contacts/store.ts). docs/webhooks.md is the prose version of the
 * same table.
 */

const SESSION = "sess_3kT9xQ2mZa";
const AT = "2026-03-02T09:15:04.120Z";
const PEER = "628123456789@s.whatsapp.net";
const ME = "628111222333@s.whatsapp.net";
const GROUP = "120363012345678901@g.us";

const ParticipantSchema = z.object({ id: z.string(), admin: z.enum(["admin", "superadmin"]).nullable() });

const receivedText = {
  id: "3EB0C431C26A1916E1E5",
  remoteJid: PEER,
  sender: PEER,
  fromMe: false,
  pushName: "Budi",
  type: "TEXT",
  content: "Is the order ready?",
  message: { type: "text", text: "Is the order ready?" },
  mediaUrl: null,
  status: null,
  timestamp: AT,
  quotedId: null,
  starred: false,
  reactions: {},
  editedAt: null,
  deletedAt: null,
  poll: null,
};

interface EventDoc {
  summary: string;
  data: z.ZodType;
  example: unknown;
}

const CATALOGUE: Record<WebhookEvent, EventDoc> = {
  "message.received": {
    summary: "A new message arrived from someone else (live, not history sync)",
    data: MessageResourceSchema,
    example: receivedText,
  },
  "message.sent": {
    summary: "This account sent a message: through the API (once, when stored) or from the phone",
    data: MessageResourceSchema,
    example: {
      ...receivedText,
      id: "3EB0A1B2C3D4E5F60718",
      sender: ME,
      fromMe: true,
      pushName: null,
      type: "IMAGE",
      content: "Your order",
      message: {
        type: "image",
        media: {
          mimetype: "image/jpeg",
          size: 48213,
          sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        },
        caption: "Your order",
      },
      mediaUrl: `/api/messages/${SESSION}/download/3EB0A1B2C3D4E5F60718/media`,
      signedMediaUrl:
        "https://api.example.com/api/media/0b7c5d52-6a1e-4bb0-9d1c-3c1f0f9e2a11/3EB0A1B2C3D4E5F60718?expires=1796000000&signature=7q1v…",
      status: "SENT",
    },
  },
  "message.status": {
    summary: "A message's delivery status moved (SENT → DELIVERED → READ, or FAILED)",
    data: z.object({
      keyId: z.string().openapi({ description: "The message id" }),
      remoteJid: z.string(),
      status: z.enum(MESSAGE_STATUSES),
      reason: z.string().optional().openapi({
        description: "Why WhatsApp refused it (FAILED only, when it said), e.g. the reach-out timelock",
      }),
    }),
    example: { keyId: "3EB0A1B2C3D4E5F60718", remoteJid: PEER, status: "READ" },
  },
  "connection.update": {
    summary: "The session's lifecycle state changed (connected, QR wanted, reconnecting, stopped …)",
    data: z.object({
      status: z.enum(SESSION_STATUSES),
      state: z.enum(SESSION_STATES),
      previousState: z.enum(SESSION_STATES),
      me: z.object({ id: z.string(), name: z.string().optional() }).nullable(),
      lastDisconnect: z.string().nullable().openapi({ description: "Why it last left `connected`" }),
    }),
    example: {
      status: "Connected",
      state: "connected",
      previousState: "scan_qr",
      me: { id: "628111222333:12@s.whatsapp.net", name: "Toko Maju" },
      lastDisconnect: null,
    },
  },
  "group.update": {
    summary: "Information of a known group changed: `jid` plus only the fields that changed",
    data: z.object({
      jid: z.string(),
      subject: z.string().optional(),
      description: z.string().nullable().optional(),
      owner: z.string().nullable().optional(),
      isCommunity: z.boolean().optional(),
      linkedParentJid: z.string().nullable().optional(),
      participants: z.array(ParticipantSchema).optional(),
      announce: z.boolean().optional(),
      restrict: z.boolean().optional(),
      ephemeral: z.number().int().optional(),
      creation: z.number().int().nullable().optional(),
    }),
    example: { jid: GROUP, subject: "Suppliers 2026", announce: true },
  },
  "group.upsert": {
    summary: "The account joined, created or was added to a group it did not know: the whole group",
    data: GroupSchema,
    example: {
      id: GROUP,
      jid: GROUP,
      subject: "Suppliers",
      desc: "Orders and invoices",
      description: "Orders and invoices",
      owner: PEER,
      size: 2,
      isCommunity: false,
      linkedParentJid: null,
      participants: [
        { id: PEER, admin: "superadmin" },
        { id: ME, admin: null },
      ],
      announce: false,
      restrict: false,
      ephemeral: 0,
      creation: 1772442904,
      inviteCode: null,
    },
  },
  "group.participant": {
    summary: "Members joined, left, were removed, promoted or demoted: only those the change touched",
    data: z.object({
      jid: z.string(),
      action: z.string().openapi({ description: "add, remove, promote, demote, or as WhatsApp reports" }),
      participants: z.array(z.string()),
      author: z.string().nullable().openapi({ description: "Who made the change, when known" }),
    }),
    example: { jid: GROUP, action: "promote", participants: [ME], author: PEER },
  },
  "contact.update": {
    summary: "A contact appeared or its names, LID or picture changed (one event per contact)",
    data: z.object({
      jid: z.string(),
      lid: z.string().nullable(),
      name: z.string().nullable().openapi({ description: "The name in the account's address book" }),
      notify: z.string().nullable().openapi({ description: "The contact's own push name" }),
      verifiedName: z.string().nullable(),
      profilePic: z.string().nullable(),
      blocked: z.boolean(),
    }),
    example: {
      jid: PEER,
      lid: null,
      name: null,
      notify: "Budi",
      verifiedName: null,
      profilePic: null,
      blocked: false,
    },
  },
  "status.update": {
    summary: "A status (story) was posted, by this account or by a contact: the status message",
    data: MessageResourceSchema,
    example: {
      ...receivedText,
      id: "3EB0F00DFEEDBEEF0001",
      remoteJid: "status@broadcast",
      content: "Open until 9 pm today",
      message: { type: "text", text: "Open until 9 pm today" },
    },
  },
  "message.edited": {
    summary: "A message was edited (by this account through the API or the phone, or by the peer)",
    data: z.object({
      keyId: z.string(),
      remoteJid: z.string(),
      fromMe: z.boolean(),
      newContent: z.string(),
    }),
    example: {
      keyId: "3EB0C431C26A1916E1E5",
      remoteJid: PEER,
      fromMe: false,
      newContent: "Is order #12 ready?",
    },
  },
  "message.deleted": {
    summary: "A message was deleted for everyone (revoked), by this account or the peer",
    data: z.object({ keyId: z.string(), remoteJid: z.string(), fromMe: z.boolean() }),
    example: { keyId: "3EB0C431C26A1916E1E5", remoteJid: PEER, fromMe: false },
  },
  "poll.vote": {
    summary:
      "Someone voted on a poll this account sent (a changed vote is a new event, an un-vote has no options); each vote once",
    data: z.object({
      keyId: z.string().openapi({ description: "The vote message's id" }),
      pollId: z.string().openapi({ description: "The poll message's id" }),
      remoteJid: z.string().openapi({ description: "The poll's chat" }),
      voter: z.string().openapi({ description: "The voter's JID (phone number when known, else LID)" }),
      voterPhone: z.string().nullable().openapi({ description: "The voter's number, digits only" }),
      selectedOptions: z.array(z.string()).openapi({ description: "Option names; empty = vote taken back" }),
      timestamp: z.number().int().openapi({ description: "When the vote was cast (epoch milliseconds)" }),
    }),
    example: {
      keyId: "3EB0A1B2C3D4E5F60718",
      pollId: "3EB0C431C26A1916E1E6",
      remoteJid: PEER,
      voter: PEER,
      voterPhone: "628123456789",
      selectedOptions: ["Approve"],
      timestamp: 1772442904120,
    },
  },
  ...APP_STATE_EVENT_DOCS,
  "account.limits": {
    summary:
      "WhatsApp announced a limit on the account: a reach-out timelock (no new chats until a time) or its standing against the new-chat message cap",
    data: SessionLimitsSchema,
    example: {
      reachoutTimelock: { active: true, until: 1772529304000, enforcementType: "DEFAULT" },
      newChatCap: null,
    },
  },
  "call.received": {
    summary:
      "Someone calls this account (voice or video); with the session's rejectCalls the gateway declines it",
    data: z.object({
      callId: z.string().openapi({ description: "WhatsApp's call id" }),
      from: z.string().openapi({ description: "The caller's JID (phone number when known, else LID)" }),
      callerPhone: z.string().nullable().openapi({ description: "The caller's number, digits only" }),
      isVideo: z.boolean(),
      isGroup: z.boolean(),
      timestamp: z.number().int().openapi({ description: "When the call was offered (epoch milliseconds)" }),
      rejected: z
        .boolean()
        .openapi({ description: "Declined automatically (rejectCalls); the rejection follows the event" }),
    }),
    example: {
      callId: "8A1C2F0D6B9E4A37C5D2E1F0A9B8C7D6",
      from: PEER,
      callerPhone: "628123456789",
      isVideo: false,
      isGroup: false,
      timestamp: 1772442904000,
      rejected: true,
    },
  },
  "presence.update": {
    summary:
      "A contact whose presence this session subscribed to comes online, goes, types or records in a chat",
    data: z.object({
      chat: z.string().openapi({ description: "The chat (the contact's JID in a one-to-one chat)" }),
      participant: z.string().openapi({ description: "Whose presence it is" }),
      presence: z.enum(PRESENCES),
      lastSeen: z
        .number()
        .int()
        .nullable()
        .openapi({ description: "Last online (epoch milliseconds), when WhatsApp says" }),
    }),
    example: { chat: PEER, participant: PEER, presence: "composing", lastSeen: null },
  },
};

const pascal = (event: string) =>
  event
    .split(".")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");

const envelopeOf = (event: string, data: z.ZodType) =>
  z.object({
    event: z.literal(event),
    sessionId: z.string().openapi({ description: "The session's public id" }),
    timestamp: z.string().openapi({ description: "When the event happened (ISO 8601)" }),
    data,
  });

const eventSchemas = WEBHOOK_EVENTS.map((event) => ({
  event,
  summary: CATALOGUE[event].summary,
  schema: envelopeOf(event, CATALOGUE[event].data).openapi(`${pascal(event)}Event`, {
    description: CATALOGUE[event].summary,
    example: { event, sessionId: SESSION, timestamp: AT, data: CATALOGUE[event].example },
  }),
}));

const TestEventSchema = envelopeOf(
  TEST_EVENT,
  z.object({ message: z.string(), webhookId: z.string(), webhookName: z.string() }),
).openapi("WebhookTestEvent", {
  description: "Sent only by `POST /api/webhooks/{sessionId}/{webhookId}/test`, whatever `events` says",
  example: {
    event: TEST_EVENT,
    sessionId: SESSION,
    timestamp: AT,
    data: { message: "Test delivery from Switchboard", webhookId: "6f1c2b9e-…", webhookName: "CRM" },
  },
});

export const WebhookPayloadSchema = z
  .discriminatedUnion("event", [TestEventSchema, ...eventSchemas.map(({ schema }) => schema)])
  .openapi("WebhookPayload", {
    description:
      "The JSON body of every delivery: `{event, sessionId, timestamp, data}`; `data` depends on `event`.",
  });

const DeliveryHeadersSchema = z.object({
  "webhook-id": z.string().openapi({ description: "Same on every retry of this event to this endpoint" }),
  "webhook-timestamp": z.string().openapi({ description: "Unix seconds when this attempt was signed" }),
  "webhook-signature": z
    .string()
    .openapi({ description: "`v1,<base64 HMAC-SHA256 of id.timestamp.body>` (Standard Webhooks)" }),
  "x-webhook-signature": z
    .string()
    .openapi({ description: "`sha256=<hex HMAC-SHA256 of the body>`, keyed with the whole secret" }),
});

/**
 * Lists every event under the document's top-level `webhooks` (OpenAPI 3.1). Registered on the
 * webhooks router, so the names carry its mount path (`/api/webhooks/message.received`).
 */
export function documentWebhookEvents(router: OpenAPIHono<AppEnv>): void {
  const delivered =
    "Delivered to every active endpoint subscribed to this event (or to `*`). See docs/webhooks.md.";
  const events = eventSchemas.map((entry) => ({ ...entry, description: delivered }));
  const test = {
    event: TEST_EVENT,
    summary: "A test delivery",
    description: "Sent only by `POST /api/webhooks/{sessionId}/{webhookId}/test`, whatever `events` says.",
    schema: TestEventSchema,
  };
  const all = {
    event: ALL_EVENTS,
    summary: "Any event: what a webhook subscribed to `*` receives",
    description: delivered,
    schema: WebhookPayloadSchema,
  };
  for (const { event, summary, description, schema } of [...events, test, all]) {
    router.openAPIRegistry.registerWebhook({
      method: "post",
      path: event,
      tags: ["Webhooks"],
      summary,
      description,
      request: {
        headers: DeliveryHeadersSchema,
        body: { content: { "application/json": { schema } }, required: true },
      },
      responses: {
        200: { description: "Any 2xx within 15 s acknowledges the delivery" },
        410: { description: "Gone: the endpoint is disabled and receives nothing more" },
        default: { description: "Anything else (3xx included) is retried on the schedule" },
      },
    });
  }
}
