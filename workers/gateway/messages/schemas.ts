import { z } from "@hono/zod-openapi";
import {
  CHAT_JID_MESSAGE,
  ChatJidSchema,
  ContentSchema,
  isChatJid,
  MESSAGE_STATUSES,
} from "../../../bridge/src/protocol/messaging";
import { MESSAGE_TYPES } from "../../../durable-objects/messaging/messages/store";
import { errorResponse, gatewayErrors } from "../../http/openapi";

/** Path and body pieces every messaging route shares. */

export const SessionParamSchema = z.object({
  sessionId: z
    .string()
    .min(1)
    .max(64)
    .openapi({
      param: { name: "sessionId", in: "path" },
      description: "The public sessionId or the internal id",
    }),
});

// Built here rather than taken from the bridge's schema: the bridge's zod instances carry no `.openapi()`.
const jidParam = z
  .string()
  .max(128)
  .refine(isChatJid, { message: CHAT_JID_MESSAGE })
  .openapi({
    param: { name: "jid", in: "path" },
    description: "URL-encoded chat JID: `<number>@s.whatsapp.net`, `<digits>@lid` or `<digits>@g.us`",
    example: "628123456789@s.whatsapp.net",
  });

export const ChatParamsSchema = SessionParamSchema.extend({ jid: jidParam });

export const MessageParamsSchema = ChatParamsSchema.extend({
  messageId: z
    .string()
    .min(1)
    .max(128)
    .openapi({
      param: { name: "messageId", in: "path" },
      description: "WhatsApp message id (`id` of a message)",
    }),
});

/** The body of a reaction (actions.ts): an emoji, or "" to remove one's reaction. */
export const ReactBodySchema = z.strictObject({ emoji: z.string().max(32) });

export const MessageResourceSchema = z
  .object({
    id: z.string(),
    remoteJid: z.string(),
    sender: z.string(),
    fromMe: z.boolean(),
    pushName: z.string().nullable(),
    type: z.enum(Object.values(MESSAGE_TYPES) as [string, ...string[]]),
    content: z.string().nullable(),
    message: ContentSchema,
    mediaUrl: z.string().nullable(),
    signedMediaUrl: z.string().optional().openapi({
      description:
        "In webhooks and events of a message with media: a link to the file that needs no API key, good for 24 hours (absolute under PUBLIC_URL). Make a fresh one with GET …/download/{messageId}/media/link",
    }),
    status: z.enum(MESSAGE_STATUSES).nullable(),
    timestamp: z.string(),
    quotedId: z.string().nullable(),
    starred: z.boolean(),
    reactions: z.record(z.string(), z.string()),
    editedAt: z.string().nullable(),
    deletedAt: z.string().nullable(),
    poll: z
      .object({
        options: z.array(
          z.object({
            name: z.string(),
            count: z.number().int(),
            voters: z.array(z.string()).openapi({ description: "Voters' JIDs (phone number when known)" }),
          }),
        ),
        totalVoters: z.number().int().openapi({ description: "People whose current vote counts" }),
      })
      .nullable()
      .openapi({
        description:
          "A poll's current votes, each option with who chose it (a changed vote replaces the voter's earlier one, an un-vote removes it); null for other messages",
      }),
  })
  .openapi("Message");

/** GET /messages/{sessionId}/search's query (also the MCP tool search_messages' input). */
export const SearchQuerySchema = z
  .object({
    q: z.string().min(1).max(256).optional(),
    jid: ChatJidSchema.optional(),
    type: z.enum(Object.values(MESSAGE_TYPES) as [string, ...string[]]).optional(),
    fromMe: z.enum(["true", "false"]).optional(),
    page: z.coerce.number().int().min(1).max(100_000).default(1),
    limit: z.coerce.number().int().min(1).max(100).default(20),
  })
  .refine((query) => query.q !== undefined || query.jid !== undefined, { message: "q or jid is required" });

/** `{success, message}`: what the spec lists for poll, location, contact and some actions. */
export const SuccessFlagSchema = z.object({ success: z.literal(true), message: z.string() });

/** Errors of routes that need the session's WhatsApp connection. */
export const messagingErrors = {
  ...gatewayErrors,
  403: errorResponse(
    "Forbidden - Cannot access this session (or the account lacks the right, e.g. group admin)",
  ),
  404: errorResponse("Session, chat, message or group not found"),
  500: errorResponse("WhatsApp refused or failed the operation"),
  503: errorResponse("Session not ready: WhatsApp is not connected"),
} as const;
