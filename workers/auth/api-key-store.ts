import { eq } from "drizzle-orm";
import type { Env } from "../core/env";
import type { Principal } from "../core/principal";
import { grantExpired } from "../core/scopes";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { apiKeys, scopedApiKeys } from "../db/schema";
import { generateApiKey, isWellFormedApiKey, keyringTagFor, keyringTagOf } from "./api-key-format";
import { sha256Hex } from "./crypto";
import { keyringShard } from "./keyring";
import { CREDENTIALS_CHANGED, cutLiveSockets } from "./live-sockets";
import { userKeyReads } from "./user-key-reads";

export interface KeyLookup {
  principal: Principal;
  /** A pending write of `last_used_at`, for `waitUntil`, when it is due (at most once a minute). */
  touch?: Promise<unknown>;
  /** Answered from this isolate's recent answer, not the Keyring (a write then carries a guard). */
  recent?: true;
}

/**
 * Resolves a presented key through its Keyring shard: memory on a hit, one D1 read on a miss. A read
 * (`forRead`) may be answered from what this isolate resolved within the last USER_READ_TTL_MS
 * instead (see user-key-reads.ts), and so may a write whose commit carries a credential guard
 * (credential-guard.ts); any other write asks, so a revoked key never writes again.
 */
export async function principalFromApiKey(
  env: Env,
  db: Db,
  presented: string,
  { forRead }: { forRead: boolean },
): Promise<KeyLookup | null> {
  // The isolate's recent answers first: only a well-formed key is ever remembered, and the format
  // check (a CRC32 in base62) cost about a tenth of a cached read.
  const keyHash = await sha256Hex(presented);
  const recent = forRead ? userKeyReads.recent(keyHash) : undefined;
  if (recent && !grantExpired(recent.grant))
    return { principal: { via: "api_key", ...recent }, recent: true };
  if (!isWellFormedApiKey(presented)) return null;

  const generationAtRead = userKeyReads.currentGeneration();
  const resolved = await keyringShard(env, keyringTagOf(presented)).resolve(keyHash);
  if (!resolved) {
    userKeyReads.forgetKey(keyHash);
    return null;
  }
  const { touch, ...identity } = resolved;
  userKeyReads.remember(keyHash, identity, identity.user.id, generationAtRead);
  const principal: Principal = { via: "api_key", ...identity };
  if (!touch) return { principal };
  const table = identity.grant === null ? apiKeys : scopedApiKeys;
  const write = db.update(table).set({ lastUsedAt: Date.now() }).where(eq(table.id, identity.apiKeyId)).run();
  return { principal, touch: write };
}

/**
 * Must follow every committed change to a user's keys, role, name or e-mail, and their deletion:
 * the Keyring then answers from D1 again, so no cached principal outlives the change on any write,
 * nor on any read in this isolate; other isolates' reads follow within USER_READ_TTL_MS.
 */
export async function credentialsChanged(env: Env, userId: string): Promise<void> {
  userKeyReads.forgetOwner(userId);
  await keyringShard(env, await keyringTagFor(userId)).invalidate(userId);
  // Sockets were checked when they opened: close them, and the pages that may reconnect do.
  await cutLiveSockets(env, { kind: "user", id: userId }, CREDENTIALS_CHANGED);
}

export async function hasApiKey(db: Db, userId: string): Promise<boolean> {
  const row = await db.query.apiKeys.findFirst({ where: eq(apiKeys.userId, userId), columns: { id: true } });
  return row !== undefined;
}

/**
 * Replaces the user's key in one statement (upsert on the unique user_id), so the previous key
 * stops working the moment the new one exists, and concurrent regenerations leave exactly one.
 */
export async function regenerateApiKey(env: Env, db: Db, userId: string): Promise<{ key: string }> {
  const generated = await generateApiKey(userId);
  const values = {
    keyHash: generated.hash,
    displayPrefix: generated.displayPrefix,
    last4: generated.last4,
    createdAt: Date.now(),
    lastUsedAt: null,
  };
  await db
    .insert(apiKeys)
    .values({ id: newId(), userId, ...values })
    .onConflictDoUpdate({ target: apiKeys.userId, set: { id: newId(), ...values } });
  await credentialsChanged(env, userId);
  return { key: generated.key };
}

export async function revokeApiKey(env: Env, db: Db, userId: string): Promise<boolean> {
  const removed = await db.delete(apiKeys).where(eq(apiKeys.userId, userId)).returning({ id: apiKeys.id });
  await credentialsChanged(env, userId);
  return removed.length > 0;
}
