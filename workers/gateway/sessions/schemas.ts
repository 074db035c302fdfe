import { z } from "@hono/zod-openapi";
import { ProxyUrlSchema } from "../../../bridge/src/protocol/proxy";
import { BOT_CONFIG_DEFAULTS, BotConfigFields } from "../../../durable-objects/messaging/config/bot";
import { iso } from "../../db/client";
import {
  type BotConfigRow,
  SESSION_STATES,
  SESSION_STATUSES,
  type SessionRow,
  SHARE_ROLES,
} from "../../db/schema";
import { errorResponse, gatewayErrors } from "../../http/openapi";

export const SessionIdParamsSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "id", in: "path" }, description: "The public sessionId or the internal id" }),
});

export const CreateSessionBodySchema = z
  .strictObject({
    name: z.string().trim().min(1).max(100),
    sessionId: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, "Use 1-64 letters, digits, '-' or '_'")
      .optional()
      .openapi({ description: "Generated (`sess_…`) when absent" }),
  })
  .openapi("CreateSessionBody");

export const SessionSettingsSchema = z
  .strictObject({
    readReceipts: z.boolean().optional(),
    rejectCalls: z.boolean().optional(),
    antiDelete: z.boolean().optional(),
    alwaysOnline: z.boolean().optional(),
    sendGapMs: z
      .number()
      .int()
      .min(0)
      .max(60_000)
      .optional()
      .openapi({
        description:
          "Pacing: at least this many milliseconds between two messages the session sends (API, bot, " +
          "scheduler, line; broadcasts keep their own delay on top). 0 (default): no pacing. Sends wait " +
          "their turn; one that would wait over a minute is refused (503)",
      }),
    typingMs: z.number().int().min(0).max(10_000).optional().openapi({
      description:
        'Show "typing…" in the chat for this long before each message (within the gap when pacing). 0 (default): off',
    }),
    mediaRetentionDays: z
      .number()
      .int()
      .min(1)
      .max(3650)
      .optional()
      .openapi({
        description:
          "Days a received file stays stored after its first download (default 30); a daily sweep removes older " +
          "ones, and a later download fetches it from WhatsApp again while WhatsApp still has it",
      }),
  })
  .openapi("SessionSettings");

export const PatchSettingsBodySchema = z
  .strictObject({ config: SessionSettingsSchema })
  .openapi("PatchSettingsBody");

export const BotConfigSchema = z
  .object({
    id: z.string().nullable(),
    sessionId: z.string(),
    ...BotConfigFields,
    removeBgApiKey: z.string().nullable().openapi({
      description: "Write-only credential, encrypted at rest: `****` when one is set, else null",
    }),
    removeBgApiKeySet: z.boolean().openapi({ description: "A remove.bg API key is saved" }),
    createdAt: z.string().nullable(),
    updatedAt: z.string().nullable(),
  })
  .openapi("BotConfig");

/** A credential is never echoed back, not even in part: only whether one is set. */
const maskSecret = (secret: string | null) => (secret ? "****" : null);

export function toBotConfigResource(session: SessionRow, row: BotConfigRow | null | undefined) {
  const noJids: string[] = [];
  if (!row) {
    return {
      id: null,
      sessionId: session.sessionId,
      ...BOT_CONFIG_DEFAULTS,
      botAllowedJids: noJids,
      botBlockedJids: noJids,
      autoReplyAllowedJids: noJids,
      autoReplyBlockedJids: noJids,
      removeBgApiKeySet: false,
      createdAt: null,
      updatedAt: null,
    };
  }
  const { id, createdAt, updatedAt, sessionId: _internal, removeBgApiKey, ...fields } = row;
  return {
    id,
    sessionId: session.sessionId,
    ...fields,
    removeBgApiKey: maskSecret(removeBgApiKey),
    removeBgApiKeySet: removeBgApiKey !== null,
    createdAt: iso(createdAt),
    updatedAt: iso(updatedAt),
  };
}

const WebhookSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  isActive: z.boolean(),
});
export type WebhookSummary = z.infer<typeof WebhookSummarySchema>;

export const MeResourceSchema = z.object({ id: z.string(), name: z.string().optional() }).nullable();

export const SessionSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    sessionId: z.string(),
    status: z.enum(SESSION_STATUSES),
    state: z.enum(SESSION_STATES).openapi({ description: "The finer lifecycle; see docs/sessions.md" }),
    userId: z.string(),
    me: MeResourceSchema,
    // Never null: a session is stored with its bot config (the defaults until changed).
    botConfig: BotConfigSchema,
    webhooks: z.array(WebhookSummarySchema).nullable(),
    _count: z.object({
      contacts: z.number(),
      messages: z.number(),
      groups: z.number(),
      autoReplies: z.number(),
      scheduledMessages: z.number(),
    }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Session");

/** WhatsApp's limits on the account as it last announced them (durable-objects/messaging/limits/). */
export const SessionLimitsSchema = z
  .object({
    reachoutTimelock: z
      .object({
        active: z.boolean(),
        until: z.number().int().nullable().openapi({ description: "Epoch ms; null: no end given" }),
        enforcementType: z.string().nullable().openapi({ example: "DEFAULT" }),
      })
      .nullable()
      .openapi({
        description:
          "WhatsApp's reach-out timelock: while active, a first message to someone who never wrote to " +
          "the account is refused (403 here, before it reaches WhatsApp)",
      }),
    newChatCap: z
      .object({
        status: z.string().openapi({
          example: "FIRST_WARNING",
          description: "NONE, FIRST_WARNING, SECOND_WARNING or CAPPED",
        }),
        used: z.number().int().nullable(),
        total: z.number().int().nullable(),
        cycleEndsAt: z.number().int().nullable().openapi({ description: "Epoch ms" }),
      })
      .nullable()
      .openapi({ description: "The new-chat message cap; at CAPPED, first messages are refused (403)" }),
  })
  .openapi("SessionLimits");

/** The proxy as responses show it: scheme, host and port; its credentials never leave the box. */
export const ShownProxySchema = z
  .string()
  .nullable()
  .openapi({
    description:
      "The proxy the session's WhatsApp connection and media go through, as `scheme://host:port` " +
      "(credentials are never shown); null: direct",
    example: "socks5://203.0.113.7:1080",
  });

export const SetProxyBodySchema = z
  .strictObject({
    url: ProxyUrlSchema.openapi({
      description:
        "`socks5://`, `socks5h://` (the proxy resolves names), `socks4://` or `http://` (CONNECT), " +
        "with optional `user:password@`; host and port required, nothing after the port",
      example: "socks5://user:secret@203.0.113.7:1080",
    }),
  })
  .openapi("SetProxyBody");

export const SessionDetailSchema = SessionSchema.extend({
  uptime: z
    .number()
    .int()
    .openapi({ description: "Seconds since the account connected; 0 when not connected" }),
  messageCount: z.number().int(),
  hasInstance: z.boolean().openapi({ description: "A bridge holds the session and its link is up" }),
  lastDisconnect: z.string().nullable(),
  waVersion: z
    .object({
      version: z.string().openapi({ example: "2.3000.1043857760" }),
      source: z.enum(["pinned", "fetched", "edge", "bundled"]).openapi({
        description:
          "pinned: the bridge's WA_VERSION; fetched: read from WA_VERSION_URL; edge: the version that " +
          "last connected this session (the source could not be read); bundled: the one Baileys ships",
      }),
    })
    .nullable()
    .openapi({
      description: "The WhatsApp Web version that last connected the session (null: never, or simulator)",
    }),
  proxy: ShownProxySchema,
  limits: SessionLimitsSchema,
}).openapi("SessionDetail");

export function toSessionResource(session: SessionRow, botConfig: BotConfigRow | null) {
  return {
    id: session.id,
    name: session.name,
    sessionId: session.sessionId,
    status: session.status,
    state: session.state,
    userId: session.userId,
    me: session.me ? (JSON.parse(session.me) as { id: string; name?: string }) : null,
    // Sessions created before their defaults were stored show the default values.
    botConfig: toBotConfigResource(session, botConfig),
    // Filled by the routes that show it (one D1 query per listing); counters come from the object.
    webhooks: [] as WebhookSummary[],
    _count: { contacts: 0, messages: 0, groups: 0, autoReplies: 0, scheduledMessages: 0 },
    createdAt: iso(session.createdAt),
    updatedAt: iso(session.updatedAt),
  };
}

export const QrSchema = z
  .object({
    success: z.literal(true),
    qr: z.string(),
    base64: z.string().openapi({ description: "PNG data URL" }),
  })
  .openapi("SessionQr");

export const ACTIONS = ["start", "stop", "restart", "logout", "pair"] as const;
export const ActionParamsSchema = SessionIdParamsSchema.extend({
  action: z.enum(ACTIONS).openapi({ param: { name: "action", in: "path" } }),
});
export const PairBodySchema = z
  .strictObject({
    phoneNumber: z
      .string()
      .regex(/^\+?[\d\s-]{8,20}$/, "Digits with country code, e.g. 628123456789")
      .transform((value) => value.replace(/\D/g, "")),
  })
  .openapi("PairBody");

export const AccessGrantSchema = z
  .object({
    sessionId: z.string(),
    email: z.string(),
    role: z.enum(SHARE_ROLES),
    createdAt: z.string(),
  })
  .openapi("SessionAccess");

/** The error responses every route on one session documents. */
export const sessionErrorResponses = {
  ...gatewayErrors,
  403: errorResponse("The session is shared with you, but your role does not allow this"),
  404: errorResponse("Session not found (also when it exists but you have no access to it)"),
};
