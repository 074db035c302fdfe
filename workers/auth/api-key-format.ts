import { crc32, randomBytes, sha256Hex, toBase62 } from "./crypto";

/**
 * User API keys look like `swb_<43 base62 chars of 32 random bytes><6 base62 chars of CRC32>`.
 * The prefix makes leaked keys recognisable to secret scanners; the checksum lets us reject
 * look-alikes (typos, truncation) without touching the database.
 */
export const API_KEY_PREFIX = "swb_";
const BODY_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

function checksum(body: string): string {
  const crc = crc32(body);
  return toBase62(
    new Uint8Array([crc >>> 24, (crc >>> 16) & 0xff, (crc >>> 8) & 0xff, crc & 0xff]),
    CHECKSUM_LENGTH,
  );
}

export interface GeneratedKey {
  key: string;
  hash: string;
  displayPrefix: string;
  last4: string;
}

export async function generateApiKey(): Promise<GeneratedKey> {
  const body = toBase62(randomBytes(32), BODY_LENGTH);
  const key = `${API_KEY_PREFIX}${body}${checksum(body)}`;
  return { key, hash: await sha256Hex(key), displayPrefix: key.slice(0, 12), last4: key.slice(-4) };
}

/** Shape and checksum only; says nothing about whether the key exists. */
export function isWellFormedApiKey(candidate: string): boolean {
  if (!KEY_PATTERN.test(candidate)) return false;
  const body = candidate.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + BODY_LENGTH);
  return candidate.endsWith(checksum(body));
}
