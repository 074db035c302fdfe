import { crc32Base62, randomBytes, sha256, sha256Hex, toBase62 } from "./crypto";

/**
 * User API keys look like `swb_<tag:2><43 base62 chars of 32 random bytes><6 base62 chars of CRC32>`.
 * The prefix makes leaked keys recognisable to secret scanners; the checksum lets us reject
 * look-alikes (typos, truncation) without any lookup; the tag names the Keyring shard that owns
 * the user's keys (derived from the user id, so all of one user's keys share a shard).
 */
export const API_KEY_PREFIX = "swb_";
const TAG_LENGTH = 2;
const RANDOM_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const BODY_LENGTH = TAG_LENGTH + RANDOM_LENGTH;
const KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

const checksum = crc32Base62;

/** One of 256 shard tags, stable per user. */
export async function keyringTagFor(userId: string): Promise<string> {
  const digest = await sha256(userId);
  return toBase62(digest.subarray(0, 1), TAG_LENGTH);
}

/** The shard tag of a well-formed key. */
export const keyringTagOf = (key: string): string =>
  key.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + TAG_LENGTH);

export interface GeneratedKey {
  key: string;
  hash: string;
  displayPrefix: string;
  last4: string;
}

export async function generateApiKey(userId: string): Promise<GeneratedKey> {
  const body = `${await keyringTagFor(userId)}${toBase62(randomBytes(32), RANDOM_LENGTH)}`;
  const key = `${API_KEY_PREFIX}${body}${checksum(body)}`;
  return { key, hash: await sha256Hex(key), displayPrefix: key.slice(0, 12), last4: key.slice(-4) };
}

/** Shape and checksum only; says nothing about whether the key exists. */
export function isWellFormedApiKey(candidate: string): boolean {
  if (!KEY_PATTERN.test(candidate)) return false;
  const body = candidate.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + BODY_LENGTH);
  return candidate.endsWith(checksum(body));
}
