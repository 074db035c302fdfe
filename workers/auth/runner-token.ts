import { crc32, randomBytes, sha256Hex, toBase62 } from "./crypto";

/**
 * Runner tokens look like `swr_<43 base62 chars of 32 random bytes><6 base62 chars of CRC32>`: the
 * prefix makes a leaked token recognisable to secret scanners, the checksum rejects look-alikes
 * before any lookup. Only the SHA-256 digest is stored.
 */
export const RUNNER_TOKEN_PREFIX = "swr_";
const RANDOM_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const TOKEN_PATTERN = new RegExp(`^${RUNNER_TOKEN_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

function checksum(body: string): string {
  const crc = crc32(body);
  return toBase62(
    new Uint8Array([crc >>> 24, (crc >>> 16) & 0xff, (crc >>> 8) & 0xff, crc & 0xff]),
    CHECKSUM_LENGTH,
  );
}

export interface GeneratedRunnerToken {
  token: string;
  hash: string;
  /** Enough of the token to tell it apart in a list, not enough to guess it. */
  prefix: string;
}

export async function generateRunnerToken(): Promise<GeneratedRunnerToken> {
  const body = toBase62(randomBytes(32), RANDOM_LENGTH);
  const token = `${RUNNER_TOKEN_PREFIX}${body}${checksum(body)}`;
  return { token, hash: await sha256Hex(token), prefix: token.slice(0, 10) };
}

/** Shape and checksum only; says nothing about whether the token exists. */
export function isWellFormedRunnerToken(candidate: string): boolean {
  if (!TOKEN_PATTERN.test(candidate)) return false;
  const body = candidate.slice(RUNNER_TOKEN_PREFIX.length, RUNNER_TOKEN_PREFIX.length + RANDOM_LENGTH);
  return candidate.endsWith(checksum(body));
}
