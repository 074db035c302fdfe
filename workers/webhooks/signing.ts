/**
 * Webhook signatures, in both styles a receiver may check (docs/webhooks.md has the verifying code):
 *
 * - Standard Webhooks: `webhook-id`, `webhook-timestamp` (Unix seconds) and
 *   `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`. The key is the secret's
 *   base64 part for a `whsec_` secret, else the secret's UTF-8 bytes.
 * - The reference gateway's `X-Webhook-Signature: sha256=<hex HMAC-SHA256 of the body>`, keyed with the
 *   whole secret string, for receivers written against it.
 *
 * WebCrypto only, so the Worker (test deliveries) and the SessionDO (real ones) share it.
 */
const encoder = new TextEncoder();

export const SECRET_PREFIX = "whsec_";

/** 32 random bytes, base64, `whsec_`-prefixed (the Standard Webhooks shape; 24–64 bytes allowed). */
export function newWebhookSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `${SECRET_PREFIX}${btoa(String.fromCharCode(...bytes))}`;
}

function standardKey(secret: string): Uint8Array {
  if (secret.startsWith(SECRET_PREFIX)) {
    try {
      return Uint8Array.from(atob(secret.slice(SECRET_PREFIX.length)), (c) => c.charCodeAt(0));
    } catch {
      // not base64 after all: fall through to the raw bytes
    }
  }
  return encoder.encode(secret);
}

async function hmac(key: Uint8Array, message: string): Promise<Uint8Array> {
  const imported = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", imported, encoder.encode(message)));
}

const base64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

export async function standardSignature(secret: string, id: string, timestamp: number, body: string) {
  return `v1,${base64(await hmac(standardKey(secret), `${id}.${timestamp}.${body}`))}`;
}

export async function legacySignature(secret: string, body: string): Promise<string> {
  return `sha256=${hex(await hmac(encoder.encode(secret), body))}`;
}

/** Every header a delivery carries besides the content type. */
export async function signedHeaders(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): Promise<Record<string, string>> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": await standardSignature(secret, id, timestampSeconds, body),
    "X-Webhook-Signature": await legacySignature(secret, body),
  };
}

/** A stable id for one event to one endpoint, kept across retries and redeliveries. */
export function newMessageId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `msg_${hex(bytes)}`;
}
