import { crc32Base62, randomBytes, sha256Hex, toBase62 } from "./crypto";

/**
 * Machine credentials (runner and bridge tokens) look like `<prefix><43 base62 chars of 32 random
 * bytes><6 base62 chars of CRC32>`: the prefix makes a leaked token recognisable to secret scanners,
 * the checksum rejects look-alikes before any lookup. Only the SHA-256 digest is stored.
 */
const RANDOM_LENGTH = 43;
const CHECKSUM_LENGTH = 6;

const checksum = crc32Base62;

export interface GeneratedToken {
  token: string;
  hash: string;
  /** Enough of the token to tell it apart in a list, not enough to guess it. */
  prefix: string;
}

export interface TokenKind {
  generate(): Promise<GeneratedToken>;
  /** Shape and checksum only; says nothing about whether the token exists. */
  isWellFormed(candidate: string): boolean;
}

export function tokenKind(prefix: string): TokenKind {
  const pattern = new RegExp(`^${prefix}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);
  return {
    async generate() {
      const body = toBase62(randomBytes(32), RANDOM_LENGTH);
      const token = `${prefix}${body}${checksum(body)}`;
      return { token, hash: await sha256Hex(token), prefix: token.slice(0, prefix.length + 6) };
    },
    isWellFormed(candidate) {
      if (!pattern.test(candidate)) return false;
      const body = candidate.slice(prefix.length, prefix.length + RANDOM_LENGTH);
      return candidate.endsWith(checksum(body));
    },
  };
}

export const runnerTokens = tokenKind("swr_");
export const bridgeTokens = tokenKind("swbr_");
