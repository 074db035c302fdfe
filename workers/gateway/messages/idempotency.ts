import { z } from "@hono/zod-openapi";
import { sha256Hex } from "../../auth/crypto";

/**
 * `Idempotency-Key` on the send routes (IETF draft-ietf-httpapi-idempotency-key-header): a retry with
 * the same key on the same session is the same WhatsApp message. The key becomes the message's id
 * (derived, so it looks like any WhatsApp Web id and one session's keys say nothing of another's);
 * the session answers a message it already sent under that id without sending it again, and a message
 * sent twice under one id is one message to WhatsApp and to the recipient's phone. docs/messaging.md.
 */

/** Printable ASCII without spaces, as an sf-string (quoted) or bare. */
const KEY = /^"?[\x21\x23-\x7e]{1,255}"?$/;

export const IdempotencyHeadersSchema = z.object({
  "idempotency-key": z
    .string()
    .regex(KEY, "Idempotency-Key must be 1 to 255 printable characters without spaces")
    .optional()
    .openapi({
      description:
        "Makes a retry safe: the same key on the same session sends one message, and a repeat answers " +
        "the message already sent (200, the same id) without sending it again. Keep it for a day at least.",
      example: '"notice-8e03978e"',
    }),
});

/** The WhatsApp message id a key names on a session: `3EB0` and 20 hex digits, like a fresh one. */
export async function messageIdForKey(
  sessionId: string,
  key: string | undefined,
): Promise<string | undefined> {
  if (key === undefined) return undefined;
  const bare = key.replace(/^"(.*)"$/, "$1");
  const digest = await sha256Hex(`${sessionId}\n${bare}`);
  return `3EB0${digest.slice(0, 20).toUpperCase()}`;
}
