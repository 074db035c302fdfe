import type { AgentIdentity } from "./keyring";
import { RecentReads } from "./recent-reads";

/**
 * How long an isolate may answer a read (GET, HEAD, OPTIONS) with an agent key it resolved through
 * the Keyring, without asking again. The bound on how long a revoked key, or a terminated agent,
 * can still read in an isolate that did not process the revocation; in the isolate that did, and
 * for every write everywhere (asking the Keyring, or checked in its own commit: credential-guard.ts),
 * revocation takes effect on the very next request.
 */
export const AGENT_READ_TTL_MS = 1_000;

/** Agents poll their issues: each poll would otherwise start with a Keyring round trip. */
const agentReads = new RecentReads<AgentIdentity>(AGENT_READ_TTL_MS);

export const agentReadGeneration = (): number => agentReads.currentGeneration();

/** The identity resolved for this key hash within the last AGENT_READ_TTL_MS, if any. */
export const recentAgentIdentity = (keyHash: string, now = Date.now()): AgentIdentity | undefined =>
  agentReads.recent(keyHash, now);

/** Keeps what the Keyring just answered, unless an invalidation ran since `generationAtRead`. */
export function rememberAgentIdentity(
  keyHash: string,
  identity: AgentIdentity,
  generationAtRead: number,
  now = Date.now(),
): void {
  agentReads.remember(keyHash, identity, identity.agentId, generationAtRead, now);
}

/** The Keyring refused this key: no read may be answered from an older answer either. */
export const forgetAgentKey = (keyHash: string): void => agentReads.forgetKey(keyHash);

/** An agent's keys, role or status changed (in this isolate): forget every key of it at once. */
export const forgetAgentIdentities = (agentId: string): void => agentReads.forgetOwner(agentId);
