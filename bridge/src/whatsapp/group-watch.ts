/**
 * What one socket keeps track of about the account's groups between WhatsApp events: their metadata
 * (caches.ts `GroupCache`, for sends) and the phone numbers behind members' LIDs (group-addresses.ts),
 * and which groups must be fetched whole because an event says too little to store them.
 */
import type { BaileysEventMap, BinaryNode, GroupMetadata } from "@whiskeysockets/baileys";
import { GroupCache, isFullMetadata } from "./caches.ts";
import { GroupAddresses, isAccount } from "./group-addresses.ts";

type Me = { id?: string; lid?: string } | undefined;

export class GroupWatch {
  readonly cache = new GroupCache();
  private readonly addresses = new GroupAddresses();

  constructor(private readonly me: () => Me) {}

  /** A member's phone-number JID for their LID, when known; any other JID unchanged. */
  phoneOf(jid: string): string {
    return this.addresses.phoneOf(jid);
  }

  /**
   * Reads each `w:gp2` notification before Baileys handles it (the same emit, an earlier listener):
   * the author's number, which Baileys drops.
   */
  listen(ws: { on(event: string, listener: (node: BinaryNode) => void): unknown }): void {
    ws.on("CB:notification,type:w:gp2", (node) => this.addresses.learnFromNotification(node));
  }

  /** A group fetched whole. */
  fetched(meta: GroupMetadata): void {
    this.cache.remember(meta);
    this.addresses.learnFromMembers(meta.participants);
  }

  /** Takes in a batch of events; answers the groups to fetch whole. */
  remember(events: Partial<BaileysEventMap>): string[] {
    const fetch: string[] = [];
    for (const meta of events["groups.upsert"] ?? []) this.fetched(meta);
    for (const meta of events["groups.update"] ?? []) {
      // A change to a group we hold nothing about: only the whole group can be stored.
      if (meta.id && !isFullMetadata(meta) && !this.cache.has(meta.id)) fetch.push(meta.id);
      else this.cache.remember(meta);
      this.addresses.learnFromMembers(meta.participants);
    }
    const participants = events["group-participants.update"];
    if (participants) {
      this.cache.forget(participants.id);
      this.addresses.learnFromMembers(participants.participants);
      // Added to a group that already existed: WhatsApp says only `add`.
      if (participants.action === "add" && isAccount(participants.participants, this.me())) {
        fetch.push(participants.id);
      }
    }
    return fetch;
  }
}
