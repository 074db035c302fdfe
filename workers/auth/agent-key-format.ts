import { keyringTagFor } from "./api-key-format";
import { randomBytes, sha256Hex, toBase62 } from "./crypto";

/**
 * Agent keys look like `swa_<tag:2><43 base62 chars of 32 random bytes>`: a prefix secret scanners
 * can recognise and that never collides with user keys (`swb_`), so the two credentials cannot be
 * confused. The tag names the Keyring shard that caches the agent's keys (derived from the agent id,
 * as user keys derive theirs from the user id). Only the SHA-256 of the key is stored.
 */
export const AGENT_KEY_PREFIX = "swa_";
const TAG_LENGTH = 2;
const AGENT_KEY_PATTERN = /^swa_[0-9A-Za-z]{45}$/;

export interface GeneratedAgentKey {
  key: string;
  hash: string;
  displayPrefix: string;
}

export async function generateAgentKey(agentId: string): Promise<GeneratedAgentKey> {
  const key = `${AGENT_KEY_PREFIX}${await keyringTagFor(agentId)}${toBase62(randomBytes(32), 43)}`;
  return { key, hash: await sha256Hex(key), displayPrefix: key.slice(0, 10) };
}

export const isWellFormedAgentKey = (candidate: string): boolean => AGENT_KEY_PATTERN.test(candidate);

/** The Keyring shard tag of a well-formed agent key. */
export const agentKeyringTagOf = (key: string): string =>
  key.slice(AGENT_KEY_PREFIX.length, AGENT_KEY_PREFIX.length + TAG_LENGTH);
