/** `last_used_at` is a hint for humans: one write a minute per key is plenty. */
const TOUCH_INTERVAL_MS = 60_000;
/** Bounds memory per kind of key; the least recently filled entries go first. */
const MAX_ENTRIES = 10_000;

interface Entry<T> {
  value: T;
  ownerId: string;
  lastTouchedAt: number;
}

/**
 * Key hash → principal, grouped by owner (a user or an agent) so one owner's keys can be forgotten
 * at once. A lookup that raced with an invalidation is answered but not remembered (the
 * `generation` check), so a stale row can never outlive the write that made it stale.
 */
export class PrincipalCache<T> {
  private readonly byHash = new Map<string, Entry<T>>();
  private readonly hashesByOwner = new Map<string, Set<string>>();
  private generation = 0;

  async resolve(
    keyHash: string,
    load: () => Promise<{ value: T; ownerId: string } | null>,
  ): Promise<{ value: T; touch: boolean } | null> {
    const cached = this.byHash.get(keyHash);
    if (cached) return this.answer(cached);
    const generationAtRead = this.generation;
    const loaded = await load();
    if (!loaded) return null;
    const entry: Entry<T> = { ...loaded, lastTouchedAt: 0 };
    if (generationAtRead === this.generation) this.remember(keyHash, entry);
    return this.answer(entry);
  }

  invalidate(ownerId: string): void {
    this.generation++;
    for (const hash of this.hashesByOwner.get(ownerId) ?? []) this.byHash.delete(hash);
    this.hashesByOwner.delete(ownerId);
  }

  private answer(entry: Entry<T>): { value: T; touch: boolean } {
    const now = Date.now();
    const touch = now - entry.lastTouchedAt >= TOUCH_INTERVAL_MS;
    if (touch) entry.lastTouchedAt = now;
    return { value: entry.value, touch };
  }

  private remember(keyHash: string, entry: Entry<T>): void {
    if (this.byHash.size >= MAX_ENTRIES) this.evictOldest();
    this.byHash.set(keyHash, entry);
    const hashes = this.hashesByOwner.get(entry.ownerId) ?? new Set<string>();
    hashes.add(keyHash);
    this.hashesByOwner.set(entry.ownerId, hashes);
  }

  private evictOldest(): void {
    const oldest = this.byHash.keys().next();
    if (oldest.done) return;
    const entry = this.byHash.get(oldest.value);
    this.byHash.delete(oldest.value);
    if (entry) this.hashesByOwner.get(entry.ownerId)?.delete(oldest.value);
  }
}
