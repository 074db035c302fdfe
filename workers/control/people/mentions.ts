import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { companyMemberships, users } from "../../db/schema";
import { type MentionCandidate, mentionedIds } from "../wakes";

/**
 * @-mentions of people. The same rule as agents' (wakes/mentions.ts): `@` not glued to a preceding
 * word, then a member's display name, case-insensitively, ending at a word boundary; names may hold
 * spaces, so the longest member name that fits wins (`@Ada Lovelace` over `@Ada`). Code spans and
 * fenced blocks are quoted text and mention nobody. A name shared by an agent and a person mentions
 * both.
 */

/** The company's members by display name, when the body could mention one at all (no `@`, no query). */
export async function memberMentionCandidates(
  db: Db,
  companyId: string,
  body: string | undefined,
): Promise<MentionCandidate[]> {
  return (await memberMentionCandidatesRead(db, companyId, body)) ?? [];
}

/** The same read unsent, to join a batch of reads (db/read-batch.ts); null when nothing to ask. */
export const memberMentionCandidatesRead = (db: Db, companyId: string, body: string | undefined) =>
  body?.includes("@")
    ? db
        .select({ id: users.id, name: users.name })
        .from(companyMemberships)
        .innerJoin(users, eq(users.id, companyMemberships.userId))
        .where(eq(companyMemberships.companyId, companyId))
    : null;

/** User ids of the members the body mentions, each once, in order of first mention. */
export const mentionedUserIds = (body: string, members: readonly MentionCandidate[]): string[] =>
  mentionedIds(body, members);
