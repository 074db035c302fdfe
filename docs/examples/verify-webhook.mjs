// Verifies a Switchboard webhook delivery (Standard Webhooks). docs/webhooks.md explains each step;
// the tests import this file, so the documented code is the tested code.
import { createHmac, timingSafeEqual } from "node:crypto";

const TOLERANCE_SECONDS = 5 * 60;

/** `headers`: fetch Headers or Node's `req.headers`; `body`: the raw body string. Returns the payload or throws. */
export function verifyWebhook(secret, headers, body) {
  const get = (name) => (typeof headers.get === "function" ? headers.get(name) : headers[name]) ?? "";
  const [id, timestamp, signatures] = ["webhook-id", "webhook-timestamp", "webhook-signature"].map(get);
  const age = Math.abs(Date.now() / 1000 - Number(timestamp));
  if (!(age <= TOLERANCE_SECONDS)) throw new Error("stale or missing timestamp");
  const key = secret.startsWith("whsec_") ? Buffer.from(secret.slice(6), "base64") : Buffer.from(secret);
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest();
  const matches = signatures.split(" ").some((entry) => {
    const [version, signature = ""] = entry.split(",");
    const given = Buffer.from(signature, "base64");
    return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!id || !matches) throw new Error("invalid signature");
  return JSON.parse(body);
}

/** The legacy `X-Webhook-Signature: sha256=<hex>` (HMAC of the body alone, keyed with the whole secret). */
export function verifyLegacySignature(secret, header, body) {
  const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(body).digest("hex")}`);
  const given = Buffer.from(header ?? "");
  return given.length === expected.length && timingSafeEqual(given, expected);
}
