/**
 * What one Baileys socket remembers between WhatsApp events, each bounded so a busy account cannot
 * grow the bridge's memory: group metadata (Baileys' `cachedGroupMetadata`: without it every group send
 * first asks WhatsApp for the member list) and the messages this account sent recently (Baileys'
 * `getMessage`: a recipient that could not decrypt asks for a resend).
 */
import type { GroupMetadata, proto } from "@whiskeysockets/baileys";

/** A Map that forgets its least recently used entry beyond `max`. */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.max) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  delete(key: K): void {
    this.entries.delete(key);
  }
}

export const GROUP_CACHE_SIZE = 2_000;
export const RECENT_SENT_SIZE = 500;

/** Full metadata has a subject and the member list; `groups.update` also carries partial changes. */
export const isFullMetadata = (meta: Partial<GroupMetadata>): meta is GroupMetadata =>
  typeof meta.id === "string" && typeof meta.subject === "string" && Array.isArray(meta.participants);

export class GroupCache {
  private readonly groups = new BoundedMap<string, GroupMetadata>(GROUP_CACHE_SIZE);

  get(jid: string): GroupMetadata | undefined {
    return this.groups.get(jid);
  }

  has(jid: string): boolean {
    return this.groups.has(jid);
  }

  /** A full description replaces the entry; a partial change is merged into a known one. */
  remember(meta: Partial<GroupMetadata>): void {
    if (!meta.id) return;
    if (isFullMetadata(meta)) {
      this.groups.set(meta.id, meta);
      return;
    }
    const known = this.groups.get(meta.id);
    if (known) this.groups.set(meta.id, { ...known, ...meta, participants: known.participants });
  }

  /**
   * What a group send needs (Baileys' `cachedGroupMetadata`): the cached metadata, or one fetch that
   * fills the cache. Answering "unknown" instead would make Baileys fetch on every send and keep
   * nothing. A failed fetch answers unknown, so Baileys tries once more itself and reports the error.
   */
  async forSend(
    jid: string,
    fetch: (jid: string) => Promise<GroupMetadata>,
  ): Promise<GroupMetadata | undefined> {
    const known = this.groups.get(jid);
    if (known || !jid.endsWith("@g.us")) return known;
    const fetched = await fetch(jid).catch(() => undefined);
    if (fetched) this.remember(fetched);
    return fetched;
  }

  /** Members changed: the next send fetches the list again rather than fan out to a stale one. */
  forget(jid: string): void {
    this.groups.delete(jid);
  }
}

/** Recent own sends by message id (ids are unique per account in practice). */
export class RecentSent {
  private readonly messages = new BoundedMap<string, proto.IMessage>(RECENT_SENT_SIZE);

  remember(id: string | null | undefined, message: proto.IMessage | null | undefined): void {
    if (id && message) this.messages.set(id, message);
  }

  get(id: string): proto.IMessage | undefined {
    return this.messages.get(id);
  }
}
