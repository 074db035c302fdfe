import { randomBytes, sha256Hex, toBase62 } from "./crypto";

/**
 * Agent keys look like `swa_<43 base62 chars of 32 random bytes>`: a prefix secret scanners can
 * recognise and that never collides with user keys (`swb_`), so the two credentials cannot be
 * confused. Only the SHA-256 of the key is stored.
 */
export const AGENT_KEY_PREFIX = "swa_";
const AGENT_KEY_PATTERN = /^swa_[0-9A-Za-z]{43}$/;

export interface GeneratedAgentKey {
  key: string;
  hash: string;
  displayPrefix: string;
}

export async function generateAgentKey(): Promise<GeneratedAgentKey> {
  const key = `${AGENT_KEY_PREFIX}${toBase62(randomBytes(32), 43)}`;
  return { key, hash: await sha256Hex(key), displayPrefix: key.slice(0, 10) };
}

export const isWellFormedAgentKey = (candidate: string): boolean => AGENT_KEY_PATTERN.test(candidate);
