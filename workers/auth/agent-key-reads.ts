import type { AgentIdentity } from "./keyring";

/**
 * How long an isolate may answer a read (GET, HEAD, OPTIONS) with an agent key it resolved through
 * the Keyring, without asking again. The bound on how long a revoked key, or a terminated agent,
 * can still read in an isolate that did not process the revocation; in the isolate that did, and
 * for every write everywhere, revocation takes effect on the very next request.
 */
export const AGENT_READ_TTL_MS = 1_000;
/** Bounds memory per isolate; the oldest entries go first. */
const MAX_ENTRIES = 10_000;

interface Remembered {
  identity: AgentIdentity;
  expiresAt: number;
}

/**
 * Key hash → the identity the Keyring answered for it, per isolate. Agents poll their issues, and
 * without this every poll pays a Durable Object round trip (in production possibly to another
 * colo) before any work starts. Only hashes are held, as in the Keyring.
 */
const byHash = new Map<string, Remembered>();
/** Bumped by every local invalidation, so a lookup that overlapped one is answered but never kept. */
let generation = 0;

export const agentReadGeneration = (): number => generation;

/** The identity resolved for this key hash within the last AGENT_READ_TTL_MS, if any. */
export function recentAgentIdentity(keyHash: string, now = Date.now()): AgentIdentity | undefined {
  const entry = byHash.get(keyHash);
  if (!entry) return undefined;
  if (entry.expiresAt > now) return entry.identity;
  byHash.delete(keyHash);
  return undefined;
}

/** Keeps what the Keyring just answered, unless an invalidation ran since `generationAtRead`. */
export function rememberAgentIdentity(
  keyHash: string,
  identity: AgentIdentity,
  generationAtRead: number,
  now = Date.now(),
): void {
  if (generationAtRead !== generation) return;
  byHash.delete(keyHash);
  if (byHash.size >= MAX_ENTRIES) {
    const oldest = byHash.keys().next();
    if (!oldest.done) byHash.delete(oldest.value);
  }
  byHash.set(keyHash, { identity, expiresAt: now + AGENT_READ_TTL_MS });
}

/** The Keyring refused this key: no read may be answered from an older answer either. */
export function forgetAgentKey(keyHash: string): void {
  byHash.delete(keyHash);
}

/** An agent's keys, role or status changed (in this isolate): forget every key of it at once. */
export function forgetAgentIdentities(agentId: string): void {
  generation++;
  for (const [hash, entry] of byHash) if (entry.identity.agentId === agentId) byHash.delete(hash);
}
