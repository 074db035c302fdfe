import { bytesEqual, fromBase64, hmacSha256, toBase64Url } from "../auth/crypto";
import type { Env } from "../core/env";

/**
 * Links to one message's media that work without an API key until they expire (`expires`, Unix
 * seconds): what webhooks carry, and what `…/media/link` hands out. The signature is an HMAC-SHA256 of
 * the session, the message and the expiry under a key derived from SECRETS_MASTER_KEY (a purpose of
 * its own, so it never signs or decrypts anything else). Changing any of them breaks the signature.
 */
const PURPOSE = "switchboard media links v1";
/** What a webhook's link is good for: a day, room for retries and a consumer that was briefly down. */
export const WEBHOOK_LINK_SECONDS = 24 * 60 * 60;
/** What `…/media/link` gives by default, and the most it gives. */
export const DEFAULT_LINK_SECONDS = 15 * 60;
export const MAX_LINK_SECONDS = 7 * 24 * 60 * 60;

export const signedMediaPath = (sessionId: string, messageId: string) =>
  `/api/media/${encodeURIComponent(sessionId)}/${encodeURIComponent(messageId)}`;

/**
 * The derived key, remembered per isolate for the master key it came from: every inbound media message
 * signs a link, and deriving costs a key import and an HMAC each time. One entry, as an isolate serves
 * one deployment's master key (tests that change it derive again).
 */
let derived: { master: string; key: Promise<Uint8Array> } | null = null;

function signingKey(env: Env): Promise<Uint8Array> | null {
  const master = env.SECRETS_MASTER_KEY;
  if (!master) return null;
  if (derived?.master === master) return derived.key;
  const key = hmacSha256(fromBase64(master), PURPOSE);
  derived = { master, key };
  // A failed derivation is not remembered: the next link tries again.
  key.catch(() => {
    if (derived?.key === key) derived = null;
  });
  return key;
}

async function signature(key: Uint8Array, sessionId: string, messageId: string, expires: number) {
  return hmacSha256(key, `${sessionId}\n${messageId}\n${expires}`);
}

/**
 * A link to the media of `messageId` valid until `nowMs + seconds`: absolute under PUBLIC_URL when set,
 * else a path on this API. Null when the deployment has no SECRETS_MASTER_KEY to sign with.
 */
export async function signMediaLink(
  env: Env,
  sessionId: string,
  messageId: string,
  seconds: number,
  nowMs: number,
): Promise<{ url: string; expiresAt: string } | null> {
  const key = await signingKey(env);
  if (!key) return null;
  const expires = Math.floor(nowMs / 1000) + seconds;
  const sig = toBase64Url(await signature(key, sessionId, messageId, expires));
  const origin = (env.PUBLIC_URL ?? "").replace(/\/+$/, "");
  return {
    url: `${origin}${signedMediaPath(sessionId, messageId)}?expires=${expires}&signature=${sig}`,
    expiresAt: new Date(expires * 1000).toISOString(),
  };
}

export type LinkCheck = "valid" | "expired" | "invalid";

/** Whether a presented link is one we signed, and still in time (the signature is checked first). */
export async function checkMediaLink(
  env: Env,
  link: { sessionId: string; messageId: string; expires: number; signature: string },
  nowMs: number,
): Promise<LinkCheck> {
  const key = await signingKey(env);
  if (!key) return "invalid";
  let presented: Uint8Array;
  try {
    presented = fromBase64(link.signature.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    return "invalid";
  }
  const expected = await signature(key, link.sessionId, link.messageId, link.expires);
  if (!bytesEqual(presented, expected)) return "invalid";
  return link.expires * 1000 > nowMs ? "valid" : "expired";
}
