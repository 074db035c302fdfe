import { z } from "@hono/zod-openapi";

/**
 * The inputs of the chat routes (chats.ts) that are more than a path: here, not in the router, so the
 * MCP tools build their inputs from the same schemas (workers/mcp/tools/whatsapp-read.ts).
 */

/** GET /chat/{sessionId}: one page of the chat list. */
export const ChatListQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});

/** The spec's limit on one page of history. */
export const HISTORY_PAGE = 100;

/** GET /chat/{sessionId}/{jid}: one page of a chat's history, newest first by page. */
export const HistoryQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(HISTORY_PAGE).default(HISTORY_PAGE),
  before: z
    .string()
    .regex(/^\d{1,15}\.\d{1,15}$/, "before must be a cursor from a previous page")
    .optional(),
});

/** POST /chat/{sessionId}/check: up to 50 numbers, in any common notation. */
export const CheckNumbersBodySchema = z.strictObject({
  numbers: z.array(z.string().min(1).max(64)).min(1).max(50),
});
