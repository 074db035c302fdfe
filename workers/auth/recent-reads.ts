/** Bounds memory per isolate and kind of key; the oldest entries go first. */
const MAX_ENTRIES = 10_000;

interface Remembered<T> {
  value: T;
  ownerId: string;
  expiresAt: number;
}

/**
 * Key hash → what the Keyring last answered for it, per isolate, for `ttlMs`. Only reads (GET, HEAD,
 * OPTIONS) may be answered from it: without it every poll pays a Durable Object round trip (in
 * production possibly to another colo) before any work starts. Writes ask the Keyring, which every
 * credential change invalidates before it answers, or carry a guard their own commit checks in D1
 * (credential-guard.ts), so revocation stops writes at once. Only hashes are held, as in the Keyring.
 */
export class RecentReads<T> {
  private readonly byHash = new Map<string, Remembered<T>>();
  /** Bumped by every local invalidation, so a lookup that overlapped one is answered but never kept. */
  private generation = 0;

  constructor(readonly ttlMs: number) {}

  /** Read before asking the Keyring, and handed back to `remember` with its answer. */
  currentGeneration(): number {
    return this.generation;
  }

  /** What the Keyring answered for this key hash within the last `ttlMs`, if anything. */
  recent(keyHash: string, now = Date.now()): T | undefined {
    const entry = this.byHash.get(keyHash);
    if (!entry) return undefined;
    if (entry.expiresAt > now) return entry.value;
    this.byHash.delete(keyHash);
    return undefined;
  }

  /** Keeps what the Keyring just answered, unless an invalidation ran since `generationAtRead`. */
  remember(keyHash: string, value: T, ownerId: string, generationAtRead: number, now = Date.now()): void {
    if (generationAtRead !== this.generation) return;
    this.byHash.delete(keyHash);
    if (this.byHash.size >= MAX_ENTRIES) {
      const oldest = this.byHash.keys().next();
      if (!oldest.done) this.byHash.delete(oldest.value);
    }
    this.byHash.set(keyHash, { value, ownerId, expiresAt: now + this.ttlMs });
  }

  /** The Keyring refused this key: no read may be answered from an older answer either. */
  forgetKey(keyHash: string): void {
    this.byHash.delete(keyHash);
  }

  /** The owner's keys or identity changed (in this isolate): forget every key of theirs at once. */
  forgetOwner(ownerId: string): void {
    this.generation++;
    for (const [hash, entry] of this.byHash) if (entry.ownerId === ownerId) this.byHash.delete(hash);
  }
}
