import { bytesEqual, fromBase64, randomBytes, toBase64 } from "./crypto";

/**
 * PBKDF2-HMAC-SHA256 through WebCrypto. Cloudflare's production runtime refuses more than
 * 100,000 iterations (workerd#1346) although local workerd does not enforce it, so we use exactly
 * the cap and refuse stored hashes above it: local and production then behave the same.
 * The iteration count is stored with each hash so it can be raised later without a migration.
 */
export const PBKDF2_ITERATIONS = 100_000;
const SALT_BYTES = 16;
const HASH_BITS = 256;
const SCHEME = "pbkdf2_sha256";

export const PASSWORD_MIN_LENGTH = 8;
/** Bounds the work an attacker can make one login cost. */
export const PASSWORD_MAX_LENGTH = 256;

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(password), "PBKDF2", false, [
    "deriveBits",
  ]);
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt, iterations },
    key,
    HASH_BITS,
  );
  return new Uint8Array(bits);
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, PBKDF2_ITERATIONS);
  return `${SCHEME}$${PBKDF2_ITERATIONS}$${toBase64(salt)}$${toBase64(hash)}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, iterationsText, saltText, hashText] = stored.split("$");
  const iterations = Number(iterationsText);
  if (scheme !== SCHEME || !saltText || !hashText) return false;
  if (!Number.isInteger(iterations) || iterations < 1 || iterations > PBKDF2_ITERATIONS) return false;
  const expected = fromBase64(hashText);
  const actual = await derive(password, fromBase64(saltText), iterations);
  return bytesEqual(actual, expected);
}

/**
 * A fixed hash to verify against when the e-mail is unknown, so an unknown account costs the
 * same time as a wrong password and logins do not reveal which e-mails exist.
 */
export const DECOY_HASH = `${SCHEME}$${PBKDF2_ITERATIONS}$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`;
