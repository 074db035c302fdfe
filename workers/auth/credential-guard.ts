import { type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { CredentialGuard } from "../core/actor";
import type { Db } from "../db/client";

/**
 * The write could not be committed on the recent answer alone: the guard found the credential
 * changed, or the write took a path that commits without the guard. The caller asks the Keyring
 * (middleware.ts `confirmCaller`) and runs the write again on what it answers.
 */
export class CredentialUnconfirmed extends Error {
  constructor() {
    super("The credential must be confirmed by the Keyring before this write");
  }
}

/**
 * SQLite raises "integer overflow" for abs() of the smallest 64-bit integer, and for nothing else our
 * statements do, so the batch (one transaction) fails and rolls back as a whole when the credential
 * no longer proves what it did. The CASE depends on the rows read, so SQLite cannot fold it ahead.
 */
const guardStatement = (db: Db, guard: CredentialGuard): BatchItem<"sqlite"> =>
  // A select builder, not db.run(sql): drizzle's D1 batch cannot bind a raw statement's parameters.
  db
    .select({
      ok: sql<number>`abs(CASE WHEN EXISTS (${proofOf(guard)}) THEN 0 ELSE -9223372036854775808 END)`,
    })
    .from(sql`(SELECT 1)`);

function proofOf(guard: CredentialGuard, now = Date.now()): SQL {
  if (guard.kind === "agent")
    return sql`SELECT 1 FROM agent_api_keys k JOIN agents a ON a.id = k.agent_id
      WHERE k.id = ${guard.keyId} AND k.revoked_at IS NULL AND a.id = ${guard.agentId}
        AND a.role = ${guard.role} AND a.status NOT IN ('pending_approval', 'terminated')`;
  const member = guard.memberOf
    ? sql` AND EXISTS (SELECT 1 FROM company_memberships m WHERE m.user_id = u.id
        AND m.company_id = ${guard.memberOf} AND m.role IN ('owner', 'member'))`
    : sql``;
  return sql`SELECT 1 FROM users u WHERE u.id = ${guard.userId} AND u.role = ${guard.role} AND (
      EXISTS (SELECT 1 FROM api_keys k WHERE k.id = ${guard.keyId} AND k.user_id = u.id)
      OR EXISTS (SELECT 1 FROM scoped_api_keys k WHERE k.id = ${guard.keyId} AND k.user_id = u.id
        AND (k.expires_at IS NULL OR k.expires_at > ${now})))${member}`;
}

/** Whether a failed batch failed on its guard (the message travels through D1 and drizzle's wrappers). */
export function isGuardRefusal(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 4; cause = cause.cause, depth++)
    if (cause.message.includes("integer overflow")) return true;
  return false;
}

/**
 * The guard, as the last statement of the caller's batch (none without a guard): the batch is one
 * transaction, so a refusal at its end undoes everything before it, and the statements' results keep
 * their places.
 */
export const guardedBy = (db: Db, guard: CredentialGuard | null | undefined): BatchItem<"sqlite">[] =>
  guard ? [guardStatement(db, guard)] : [];

/** The commit, with a refused guard turned into CredentialUnconfirmed (nothing was committed). */
export async function unlessGuardRefused<T>(commit: Promise<T>): Promise<T> {
  try {
    return await commit;
  } catch (error) {
    if (isGuardRefusal(error)) throw new CredentialUnconfirmed();
    throw error;
  }
}
