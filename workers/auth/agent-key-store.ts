import { eq } from "drizzle-orm";
import type { AgentActor } from "../control/actor";
import type { Db } from "../db/client";
import { agentApiKeys } from "../db/schema";
import type { Env } from "../env";
import { agentKeyringTagOf, isWellFormedAgentKey } from "./agent-key-format";
import { keyringTagFor } from "./api-key-format";
import { keyringShard } from "./api-key-store";
import { sha256Hex } from "./crypto";

export interface AgentKeyLookup {
  actor: AgentActor;
  /** A pending `last_used_at` write for `waitUntil`, at most once a minute per key. */
  touch?: Promise<unknown>;
}

/**
 * Resolves `Authorization: Bearer <agent key>` through the Keyring shard named in the key: memory on
 * a hit, one D1 read on a miss. Null for anything that must answer 401 (unknown, revoked, or an agent
 * that is pending_approval or terminated).
 */
export async function actorFromAgentKey(env: Env, db: Db, presented: string): Promise<AgentKeyLookup | null> {
  if (!isWellFormedAgentKey(presented)) return null;
  const resolved = await keyringShard(env, agentKeyringTagOf(presented)).resolveAgent(
    await sha256Hex(presented),
  );
  if (!resolved) return null;
  const { touch, ...identity } = resolved;
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
 * from D1 again, so a revoked key or a terminated agent is refused on the very next request.
 */
export async function agentCredentialsChanged(env: Env, agentId: string): Promise<void> {
  await keyringShard(env, await keyringTagFor(agentId)).invalidateAgent(agentId);
}
