import { and, asc, eq } from "drizzle-orm";
import type { Env } from "../core/env";
import type { KeyScope } from "../core/scopes";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { type ScopedApiKeyRow, scopedApiKeys, sessions } from "../db/schema";
import { generateApiKey } from "./api-key-format";
import { credentialsChanged } from "./api-key-store";

/** What a caller asks for; the session and company are already checked to be theirs (scoped-keys.ts). */
export interface NewScopedKey {
  name: string;
  scopes: KeyScope[];
  sessionId: string | null;
  companyId: string | null;
  expiresAt: number | null;
}

/** A stored key as listings show it: never the key, never its hash; the session by its public id. */
export interface ScopedKeyView {
  row: ScopedApiKeyRow;
  sessionSlug: string | null;
}

/**
 * Stores a new scoped key for the user and answers it with the full key, which exists only in this
 * answer. The key has the full key's format and Keyring shard (auth/api-key-format.ts), so every
 * path that authenticates a user key authenticates it too.
 */
export async function createScopedKey(
  db: Db,
  userId: string,
  input: NewScopedKey,
): Promise<{ key: string; view: ScopedKeyView }> {
  const generated = await generateApiKey(userId);
  const row: ScopedApiKeyRow = {
    id: newId(),
    userId,
    name: input.name,
    keyHash: generated.hash,
    displayPrefix: generated.displayPrefix,
    last4: generated.last4,
    scopes: input.scopes,
    sessionId: input.sessionId,
    companyId: input.companyId,
    expiresAt: input.expiresAt,
    createdAt: Date.now(),
    lastUsedAt: null,
  };
  await db.insert(scopedApiKeys).values(row);
  const [view] = await listScopedKeys(db, userId, row.id);
  return { key: generated.key, view: view ?? { row, sessionSlug: null } };
}

/** The user's scoped keys, oldest first (or the one named by `onlyId`). */
export async function listScopedKeys(db: Db, userId: string, onlyId?: string): Promise<ScopedKeyView[]> {
  const rows = await db
    .select({ row: scopedApiKeys, sessionSlug: sessions.sessionId })
    .from(scopedApiKeys)
    .leftJoin(sessions, eq(sessions.id, scopedApiKeys.sessionId))
    .where(
      and(eq(scopedApiKeys.userId, userId), onlyId === undefined ? undefined : eq(scopedApiKeys.id, onlyId)),
    )
    .orderBy(asc(scopedApiKeys.createdAt), asc(scopedApiKeys.id));
  return rows;
}

/**
 * Deletes one of the user's scoped keys; another user's id is not found, as a missing one. The Keyring
 * forgets the user's keys and their live sockets close before this answers (credentialsChanged).
 */
export async function revokeScopedKey(env: Env, db: Db, userId: string, keyId: string): Promise<boolean> {
  const removed = await db
    .delete(scopedApiKeys)
    .where(and(eq(scopedApiKeys.id, keyId), eq(scopedApiKeys.userId, userId)))
    .returning({ id: scopedApiKeys.id });
  if (removed.length === 0) return false;
  await credentialsChanged(env, userId);
  return true;
}
