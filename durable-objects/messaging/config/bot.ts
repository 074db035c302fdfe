import { z } from "@hono/zod-openapi";
import { ACCESS_MODES } from "../../../workers/db/schema";

/**
 * The bot's configuration as the session's bot reads it and the gateway's bot-config endpoint
 * writes it (the schema lives here, with the code it configures; the API only exposes it).
 */

/**
 * `<digits>@s.whatsapp.net` or `<digits>@lid` (a person, by phone number or by LID; either names the
 * person once the session knows both), or `<digits>@g.us` / `<digits>-<digits>@g.us` (a group).
 */
export const JidSchema = z
  .string()
  .regex(
    /^(\d{5,20}@s\.whatsapp\.net|\d{5,20}@lid|\d{5,20}(-\d{5,20})?@g\.us)$/,
    "Expected a JID like 628123456789@s.whatsapp.net",
  )
  .openapi({ example: "628123456789@s.whatsapp.net" });

const JidList = z.array(JidSchema).max(1000);

/** Writable bot-config fields; omitted fields keep their value (the reference reset some: we do not). */
export const BotConfigFields = {
  enabled: z.boolean(),
  botMode: z.enum(ACCESS_MODES),
  botAllowedJids: JidList,
  botBlockedJids: JidList,
  autoReplyMode: z.enum(ACCESS_MODES),
  autoReplyAllowedJids: JidList,
  autoReplyBlockedJids: JidList,
  botName: z.string().trim().min(1).max(100),
  prefix: z.string().min(1).max(5),
  enableSticker: z.boolean(),
  enableVideoSticker: z.boolean(),
  maxStickerDuration: z.number().int().min(1).max(60),
  enablePing: z.boolean(),
  enableUptime: z.boolean(),
  removeBgApiKey: z.string().min(1).max(256).nullable(),
};

export const BotConfigBodySchema = z.strictObject(BotConfigFields).partial().openapi("BotConfigBody");

export type BotConfigInput = z.infer<typeof BotConfigBodySchema>;

export const BOT_CONFIG_DEFAULTS = {
  enabled: true,
  botMode: "OWNER",
  botAllowedJids: [],
  botBlockedJids: [],
  autoReplyMode: "ALL",
  autoReplyAllowedJids: [],
  autoReplyBlockedJids: [],
  botName: "Switchboard Bot",
  prefix: "#",
  enableSticker: true,
  enableVideoSticker: true,
  maxStickerDuration: 10,
  enablePing: true,
  enableUptime: true,
  removeBgApiKey: null,
} as const satisfies Required<BotConfigInput>;
