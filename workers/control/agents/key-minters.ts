import { eq, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { Db } from "../../db/client";
import { agentApiKeys, agents, users } from "../../db/schema";

export type KeyRow = typeof agentApiKeys.$inferSelect;

/** Who minted a key: a board user or an agent; null for a key the platform minted (a run's key). */
export type KeyMinter = {
  type: "user" | "agent";
  id: string;
  name: string | null;
  email: string | null;
} | null;

const minterAgent = alias(agents, "minter");

/** Agent keys matching `where`, each with who minted it (the name as the minter is called now). */
export async function keysWithMinters(
  db: Db,
  where: SQL | undefined,
  order: SQL,
): Promise<Array<{ row: KeyRow; minter: KeyMinter }>> {
  const rows = await db
    .select({ row: agentApiKeys, userName: users.name, userEmail: users.email, agentName: minterAgent.name })
    .from(agentApiKeys)
    .leftJoin(users, eq(users.id, agentApiKeys.createdByUserId))
    .leftJoin(minterAgent, eq(minterAgent.id, agentApiKeys.createdByAgentId))
    .where(where)
    .orderBy(order);
  return rows.map(({ row, userName, userEmail, agentName }) => ({
    row,
    minter: minterOf(row, { name: userName ?? agentName, email: userEmail }),
  }));
}

/** The minter of a key whose author's name and e-mail are known (null where unknown). */
export function minterOf(row: KeyRow, who: { name: string | null; email: string | null }): KeyMinter {
  if (row.createdByUserId !== null)
    return { type: "user", id: row.createdByUserId, name: who.name, email: who.email };
  if (row.createdByAgentId !== null)
    return { type: "agent", id: row.createdByAgentId, name: who.name, email: null };
  return null;
}
