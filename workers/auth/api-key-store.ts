import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { apiKeys, users } from "../db/schema";
import { generateApiKey, isWellFormedApiKey } from "./api-key-format";
import { sha256Hex } from "./crypto";
import type { Principal } from "./principal";
import { toPublicUser } from "./user-store";

/** `last_used_at` is a hint for humans; writing it at most once a minute keeps auth read-only. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface KeyLookup {
  principal: Principal;
  /** A pending write of `last_used_at`, for `waitUntil`, when the stored value is stale. */
  touch?: Promise<unknown>;
}

export async function principalFromApiKey(db: Db, presented: string): Promise<KeyLookup | null> {
  if (!isWellFormedApiKey(presented)) return null;
  const [row] = await db
    .select({ keyId: apiKeys.id, lastUsedAt: apiKeys.lastUsedAt, user: users })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(eq(apiKeys.keyHash, await sha256Hex(presented)))
    .limit(1);
  if (!row) return null;
  const now = Date.now();
  const principal: Principal = { via: "api_key", user: toPublicUser(row.user), apiKeyId: row.keyId };
  const stale = (row.lastUsedAt ?? 0) < now - LAST_USED_RESOLUTION_MS;
  return stale
    ? { principal, touch: db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, row.keyId)).run() }
    : { principal };
}

export async function hasApiKey(db: Db, userId: string): Promise<boolean> {
  const row = await db.query.apiKeys.findFirst({ where: eq(apiKeys.userId, userId), columns: { id: true } });
  return row !== undefined;
}

/**
 * Replaces the user's key in one statement (upsert on the unique user_id), so the previous key
 * stops working the moment the new one exists, and concurrent regenerations leave exactly one.
 */
export async function regenerateApiKey(db: Db, userId: string): Promise<{ key: string; createdAt: number }> {
  const generated = await generateApiKey();
  const createdAt = Date.now();
  const values = {
    keyHash: generated.hash,
    displayPrefix: generated.displayPrefix,
    last4: generated.last4,
    createdAt,
    lastUsedAt: null,
  };
  await db
    .insert(apiKeys)
    .values({ id: newId(), userId, ...values })
    .onConflictDoUpdate({ target: apiKeys.userId, set: { id: newId(), ...values } });
  return { key: generated.key, createdAt };
}

export async function revokeApiKey(db: Db, userId: string): Promise<boolean> {
  const removed = await db.delete(apiKeys).where(eq(apiKeys.userId, userId)).returning({ id: apiKeys.id });
  return removed.length > 0;
}
