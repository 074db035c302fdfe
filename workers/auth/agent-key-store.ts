import { and, eq, isNull } from "drizzle-orm";
import type { Actor } from "../control/actor";
import type { Db } from "../db/client";
import { agentApiKeys, agents } from "../db/schema";
import { isWellFormedAgentKey } from "./agent-key-format";
import { sha256Hex } from "./crypto";

/** Agents that may not authenticate at all: their keys answer 401 until (or forever after) a decision. */
const LOCKED_OUT = new Set(["pending_approval", "terminated"]);
const TOUCH_INTERVAL_MS = 60_000;

export interface AgentKeyLookup {
  actor: Extract<Actor, { type: "agent" }>;
  /** A pending `last_used_at` write for `waitUntil`, at most once a minute per key. */
  touch?: Promise<unknown>;
}

/** Resolves `Authorization: Bearer <agent key>`; null for anything that must answer 401. */
export async function actorFromAgentKey(db: Db, presented: string): Promise<AgentKeyLookup | null> {
  if (!isWellFormedAgentKey(presented)) return null;
  const [row] = await db
    .select({ key: agentApiKeys, agent: agents })
    .from(agentApiKeys)
    .innerJoin(agents, eq(agents.id, agentApiKeys.agentId))
    .where(and(eq(agentApiKeys.keyHash, await sha256Hex(presented)), isNull(agentApiKeys.revokedAt)))
    .limit(1);
  if (!row || LOCKED_OUT.has(row.agent.status)) return null;
  const actor = {
    type: "agent" as const,
    agentId: row.agent.id,
    companyId: row.agent.companyId,
    agent: row.agent,
    keyId: row.key.id,
  };
  const now = Date.now();
  if (row.key.lastUsedAt !== null && now - row.key.lastUsedAt < TOUCH_INTERVAL_MS) return { actor };
  const touch = db.update(agentApiKeys).set({ lastUsedAt: now }).where(eq(agentApiKeys.id, row.key.id)).run();
  return { actor, touch };
}
