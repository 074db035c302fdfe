import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { agents, users } from "../../db/schema";

/**
 * Display names of the people and agents a list of rows points at (comment authors, activity
 * actors, approval requesters), in one batched read per kind, never one per row.
 *
 * Agents are looked up in the company only. User ids come from the company's own rows (its comments,
 * log, approvals), so a name is shown for whoever wrote there, also after they left the company;
 * an id not found (a deleted account, another company's agent) names nobody (null).
 */
export interface ActorIds {
  userIds: Iterable<string | null | undefined>;
  agentIds: Iterable<string | null | undefined>;
}

export interface ActorNames {
  user(id: string | null | undefined): string | null;
  agent(id: string | null | undefined): string | null;
}

const present = (ids: Iterable<string | null | undefined>) => [
  ...new Set([...ids].filter((id): id is string => typeof id === "string" && id.length > 0)),
];

/** D1 caps bound parameters per statement; batches stay well under it. */
const CHUNK = 90;

function chunks(ids: string[]): string[][] {
  const out: string[][] = [];
  for (let at = 0; at < ids.length; at += CHUNK) out.push(ids.slice(at, at + CHUNK));
  return out;
}

async function userNames(db: Db, ids: string[]): Promise<Map<string, string>> {
  const rows = await Promise.all(
    chunks(ids).map((part) =>
      db.select({ id: users.id, name: users.name }).from(users).where(inArray(users.id, part)),
    ),
  );
  return new Map(rows.flat().map((row) => [row.id, row.name]));
}

async function agentNames(db: Db, companyId: string, ids: string[]): Promise<Map<string, string>> {
  const rows = await Promise.all(
    chunks(ids).map((part) =>
      db
        .select({ id: agents.id, name: agents.name })
        .from(agents)
        .where(and(eq(agents.companyId, companyId), inArray(agents.id, part))),
    ),
  );
  return new Map(rows.flat().map((row) => [row.id, row.name]));
}

export async function actorNames(db: Db, companyId: string, ids: ActorIds): Promise<ActorNames> {
  const userIds = present(ids.userIds);
  const agentIds = present(ids.agentIds);
  const [byUser, byAgent] = await Promise.all([
    userIds.length > 0 ? userNames(db, userIds) : new Map<string, string>(),
    agentIds.length > 0 ? agentNames(db, companyId, agentIds) : new Map<string, string>(),
  ]);
  return {
    user: (id) => (id ? (byUser.get(id) ?? null) : null),
    agent: (id) => (id ? (byAgent.get(id) ?? null) : null),
  };
}

/**
 * `nameOf` for one author as a read unsent, to join a batch of reads (db/read-batch.ts): rows are
 * `[{name}]`, or none for an id not found; null when the columns name nobody.
 */
export function authorNameRead(
  db: Db,
  companyId: string,
  author: { userId: string | null; agentId: string | null },
) {
  if (author.userId)
    return db.select({ name: users.name }).from(users).where(eq(users.id, author.userId)).limit(1);
  if (!author.agentId) return null;
  return db
    .select({ name: agents.name })
    .from(agents)
    .where(and(eq(agents.companyId, companyId), eq(agents.id, author.agentId)))
    .limit(1);
}

/** The name of whoever a pair of author columns names (the user when both are somehow set). */
export const nameOf = (names: ActorNames, userId: string | null, agentId: string | null): string | null =>
  userId ? names.user(userId) : names.agent(agentId);
