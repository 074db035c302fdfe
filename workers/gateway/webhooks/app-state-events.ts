import { z } from "@hono/zod-openapi";

/**
 * The catalogue entries (events.ts) of what WhatsApp's app state syncs between the account's devices:
 * chat archive/pin/mute, stars and labels, changed on the phone or through the API
 * (durable-objects/messaging/chats/app-state.ts, labels/sync.ts).
 */

const PEER = "628123456789@s.whatsapp.net";

export const APP_STATE_EVENT_DOCS = {
  "chat.update": {
    summary:
      "A chat was archived, pinned or muted (or the reverse), on the phone or through the API: its state now",
    data: z.object({
      jid: z.string(),
      archived: z.boolean(),
      pinned: z.boolean(),
      mutedUntil: z.string().nullable().openapi({ description: "ISO 8601; null when not muted" }),
    }),
    example: { jid: PEER, archived: true, pinned: false, mutedUntil: null },
  },
  "message.starred": {
    summary: "A message was starred or unstarred, on the phone or through the API",
    data: z.object({ keyId: z.string(), remoteJid: z.string(), fromMe: z.boolean(), starred: z.boolean() }),
    example: { keyId: "3EB0C431C26A1916E1E5", remoteJid: PEER, fromMe: false, starred: true },
  },
  "label.update": {
    summary: "A label was created, renamed, recoloured or (deleted) removed, on the phone or through the API",
    data: z.object({
      id: z.string().openapi({ description: "WhatsApp's label id" }),
      name: z.string(),
      color: z.number().int(),
      colorHex: z.string(),
      deleted: z.boolean(),
    }),
    example: { id: "7", name: "VIP", color: 3, colorHex: "#00FF00", deleted: false },
  },
  "label.association": {
    summary: "A label was put on a chat or taken off it, on the phone or through the API",
    data: z.object({ labelId: z.string(), jid: z.string(), action: z.enum(["add", "remove"]) }),
    example: { labelId: "7", jid: PEER, action: "add" },
  },
} as const;
