import { z } from "@hono/zod-openapi";
import { CHAT_JID_MESSAGE, isChatJid } from "../../bridge/src/protocol/messaging";
import { MEDIA_KINDS } from "../../durable-objects/messaging/scheduler/content";

/** The scheduler's body fields (scheduler.ts), apart from its router so the MCP tool can use them too. */
export const fields = {
  // Built here: the bridge's own ChatJidSchema is plain zod, without `.openapi()`.
  jid: z
    .string()
    .max(128)
    .refine(isChatJid, { message: CHAT_JID_MESSAGE })
    .openapi({ example: "628123456789@s.whatsapp.net" }),
  content: z.string().min(1).max(4096).openapi({ description: "The text, or the caption with mediaUrl" }),
  mediaUrl: z.url({ protocol: /^https?$/ }).max(2048),
  mediaType: z.enum(MEDIA_KINDS).openapi({ description: "With mediaUrl; default image" }),
  fileName: z
    .string()
    .min(1)
    .max(256)
    .openapi({ description: "Documents only; default: the URL's file name" }),
  sendAt: z
    .string()
    .max(40)
    .openapi({
      description:
        "ISO 8601. With an offset (`2026-05-01T09:00:00+07:00`, `…Z`) it is that instant; without one " +
        "(`2026-05-01T09:00`) it is local time in `timezone`.",
      example: "2026-05-01T09:00",
    }),
  timezone: z
    .string()
    .min(1)
    .max(64)
    .openapi({ description: "IANA time zone; default UTC", example: "Asia/Jakarta" }),
  cronExpression: z.string().min(1).max(128).openapi({
    description: "5-field cron, read in `timezone`: after each send the message moves to the next tick",
    example: "0 9 * * 1-5",
  }),
};

export const CreateBodySchema = z
  .strictObject({
    jid: fields.jid,
    content: fields.content.optional(),
    mediaUrl: fields.mediaUrl.optional(),
    mediaType: fields.mediaType.optional(),
    fileName: fields.fileName.optional(),
    sendAt: fields.sendAt,
    timezone: fields.timezone.optional(),
    cronExpression: fields.cronExpression.optional(),
  })
  .openapi("ScheduleBody");
