import { DurableObject } from "cloudflare:workers";
import type { PublicUser } from "../workers/auth/principal";
import type { Role } from "../workers/db/schema";
import type { Env } from "../workers/env";

/** `last_used_at` is a hint for humans: one write a minute per key is plenty. */
const TOUCH_INTERVAL_MS = 60_000;
/** Bounds memory; the least recently filled entries go first. */
const MAX_ENTRIES = 10_000;

export interface ResolvedKey {
  user: PublicUser;
  apiKeyId: string;
  /** The caller should record `last_used_at` (at most once a minute per key). */
  touch: boolean;
}

interface Entry {
  user: PublicUser;
  apiKeyId: string;
  lastTouchedAt: number;
}

interface KeyUserRow {
  key_id: string;
  id: string;
  name: string;
  email: string;
  image: string | null;
  role: Role;
}

/**
 * A read-through cache of API-key principals, so authenticating a key costs an in-memory lookup
 * instead of a D1 query (D1 is the source of truth; this object holds nothing durable).
 *
 * Each user's keys live in exactly one shard, named by a tag embedded in the key itself, so every
 * write that changes a user's credentials or identity (new key, revoked key, role or e-mail change,
 * deleted user) invalidates that one shard right after it commits: revocation is immediate, not
 * eventually consistent. A lookup that raced with an invalidation is answered but not cached (the
 * `generation` check), so a stale row can never outlive the write that made it stale.
 */
export class Keyring extends DurableObject<Env> {
  private readonly byHash = new Map<string, Entry>();
  private readonly hashesByUser = new Map<string, Set<string>>();
  private generation = 0;

  async resolve(keyHash: string): Promise<ResolvedKey | null> {
    const cached = this.byHash.get(keyHash);
    if (cached) return this.answer(cached);
    const generationAtRead = this.generation;
    const row = await this.env.DB.prepare(
      `SELECT k.id AS key_id, u.id, u.name, u.email, u.image, u.role
       FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = ?`,
    )
      .bind(keyHash)
      .first<KeyUserRow>();
    if (!row) return null;
    const entry: Entry = {
      user: { id: row.id, name: row.name, email: row.email, image: row.image, role: row.role },
      apiKeyId: row.key_id,
      lastTouchedAt: 0,
    };
    if (generationAtRead === this.generation) this.remember(keyHash, entry);
    return this.answer(entry);
  }

  /** Forgets everything about a user; call after any committed change to their keys or identity. */
  async invalidate(userId: string): Promise<void> {
    this.generation++;
    for (const hash of this.hashesByUser.get(userId) ?? []) this.byHash.delete(hash);
    this.hashesByUser.delete(userId);
  }

  private answer(entry: Entry): ResolvedKey {
    const now = Date.now();
    const touch = now - entry.lastTouchedAt >= TOUCH_INTERVAL_MS;
    if (touch) entry.lastTouchedAt = now;
    return { user: entry.user, apiKeyId: entry.apiKeyId, touch };
  }

  private remember(keyHash: string, entry: Entry): void {
    if (this.byHash.size >= MAX_ENTRIES) this.evictOldest();
    this.byHash.set(keyHash, entry);
    const hashes = this.hashesByUser.get(entry.user.id) ?? new Set<string>();
    hashes.add(keyHash);
    this.hashesByUser.set(entry.user.id, hashes);
  }

  private evictOldest(): void {
    const oldest = this.byHash.keys().next();
    if (oldest.done) return;
    const entry = this.byHash.get(oldest.value);
    this.byHash.delete(oldest.value);
    if (entry) this.hashesByUser.get(entry.user.id)?.delete(oldest.value);
  }
}
