import { and, eq, inArray, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { issues } from "../../db/schema";

/**
 * An issue is named by its id or its identifier (`ACM-12`) wherever the API takes one: in the path
 * (issues/locator.ts) and in every body field or query parameter naming an issue (parentId,
 * blockedByIssueIds, issueIds, issueId, sourceIssueIds, …), through the one resolver below.
 */

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A UUID is an id; anything else an identifier, matched case-insensitively. Prefixes are stored
 * upper-case, so `IN (as sent, upper-cased)` keeps the unique index in play where `COLLATE NOCASE`
 * would scan.
 */
export function issueKeyCondition(key: string): SQL {
  if (UUID.test(key)) return eq(issues.id, key.toLowerCase());
  const upper = key.toUpperCase();
  return upper === key ? eq(issues.identifier, key) : inArray(issues.identifier, [key, upper]);
}

/**
 * Issue ids or identifiers → the ids of this company's issues, in the order given. A key that names
 * none of them (an unknown identifier, another company's) comes back as sent, so the caller's own
 * check refuses it exactly as it refuses an unknown id: one rule for "not found" per field, whichever
 * way the issue was named. Ids need no query.
 */
export async function issueIdsIn(db: Db, companyId: string, keys: readonly string[]): Promise<string[]> {
  const identifiers = [...new Set(keys.filter((key) => !UUID.test(key)).map((key) => key.toUpperCase()))];
  const found =
    identifiers.length === 0
      ? []
      : await db
          .select({ id: issues.id, identifier: issues.identifier })
          .from(issues)
          .where(and(eq(issues.companyId, companyId), inArray(issues.identifier, identifiers)));
  const byIdentifier = new Map(found.map((row) => [row.identifier, row.id]));
  return keys.map((key) =>
    UUID.test(key) ? key.toLowerCase() : (byIdentifier.get(key.toUpperCase()) ?? key),
  );
}

/** One key, as issueIdsIn; null and undefined pass through (a cleared or absent field). */
export async function issueIdIn<T extends string | null | undefined>(
  db: Db,
  companyId: string,
  key: T,
): Promise<T | string> {
  if (key === null || key === undefined) return key;
  const [id] = await issueIdsIn(db, companyId, [key]);
  return id ?? key;
}
