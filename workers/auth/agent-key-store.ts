import { eq } from "drizzle-orm";
import type { AgentActor } from "../core/actor";
import type { Env } from "../core/env";
import type { Db } from "../db/client";
import { agentApiKeys } from "../db/schema";
import { agentKeyringTagOf, isWellFormedAgentKey } from "./agent-key-format";
import {
  agentReadGeneration,
  forgetAgentIdentities,
  forgetAgentKey,
  recentAgentIdentity,
  rememberAgentIdentity,
} from "./agent-key-reads";
import { keyringTagFor } from "./api-key-format";
import { sha256Hex } from "./crypto";
import { keyringShard } from "./keyring";
import { CREDENTIALS_CHANGED, cutLiveSockets } from "./live-sockets";

export interface AgentKeyLookup {
  actor: AgentActor;
  /** A pending `last_used_at` write for `waitUntil`, at most once a minute per key. */
  touch?: Promise<unknown>;
  /** Answered from this isolate's recent answer, not the Keyring (a write then carries a guard). */
  recent?: true;
}

/**
 * Resolves `Authorization: Bearer <agent key>` through the Keyring shard named in the key: memory on
 * a hit, one D1 read on a miss. Null for anything that must answer 401 (unknown, revoked, or an agent
 * that is pending_approval or terminated). A read (`forRead`) may be answered from what this isolate
 * resolved within the last AGENT_READ_TTL_MS instead (see agent-key-reads.ts), and so may a write
 * whose commit carries a credential guard (credential-guard.ts); any other write asks.
 */
export async function actorFromAgentKey(
  env: Env,
  db: Db,
  presented: string,
  { forRead }: { forRead: boolean },
): Promise<AgentKeyLookup | null> {
  if (!isWellFormedAgentKey(presented)) return null;
  const keyHash = await sha256Hex(presented);
  const recent = forRead ? recentAgentIdentity(keyHash) : undefined;
  if (recent) return { actor: { type: "agent", ...recent }, recent: true };

  const generationAtRead = agentReadGeneration();
  const resolved = await keyringShard(env, agentKeyringTagOf(presented)).resolveAgent(keyHash);
  if (!resolved) {
    forgetAgentKey(keyHash);
    return null;
  }
  const { touch, ...identity } = resolved;
  rememberAgentIdentity(keyHash, identity, generationAtRead);
  const actor: AgentActor = { type: "agent", ...identity };
  if (!touch) return { actor };
  const write = db
    .update(agentApiKeys)
    .set({ lastUsedAt: Date.now() })
    .where(eq(agentApiKeys.id, identity.keyId))
    .run();
  return { actor, touch: write };
}

/**
 * Must follow every committed change to an agent's keys, role or status: the Keyring then answers
 * from D1 again, so a revoked key or a terminated agent is refused on its very next write anywhere,
 * and on its next read here and, within AGENT_READ_TTL_MS, in every other isolate.
 */
export async function agentCredentialsChanged(env: Env, agentId: string): Promise<void> {
  forgetAgentIdentities(agentId);
  await keyringShard(env, await keyringTagFor(agentId)).invalidateAgent(agentId);
  // Sockets were checked when they opened: close them; a key that still works may reconnect.
  await cutLiveSockets(env, { kind: "agent", id: agentId }, CREDENTIALS_CHANGED);
}
