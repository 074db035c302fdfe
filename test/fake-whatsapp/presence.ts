/**
 * Presence subscriptions on the fake server. A companion asks for a contact's presence with
 * `<presence type=subscribe to=<jid>>` (Baileys' presenceSubscribe); from then on WhatsApp tells it,
 * and only it, when that contact comes online or goes (`<presence from type=available|unavailable
 * last=…>`) and when the contact types or records in their chat with the account (`<chatstate from>`
 * with `<composing/>`, `<composing media=audio/>` or `<paused/>`), which Baileys' handlePresenceUpdate
 * turns into `presence.update`. The subscriber also gets the contact's current presence at once, when
 * the contact has one. Stanzas come from the address the companion subscribed to (number or LID).
 * Subscriptions end with the companion's connection (`forget`), as on WhatsApp.
 */
import type { BinaryNode } from "@whiskeysockets/baileys";
import type { ChatState } from "./device.ts";
import type { Account, Directory } from "./directory.ts";

/** What presence needs from the server (server.ts is one). */
export interface PresenceHost {
  deliver(jid: string, node: BinaryNode): void;
  isConnected(jid: string): boolean;
}

export interface Subscription {
  /** The companion that subscribed. */
  companion: string;
  /** The address it subscribed to (`to`), where the updates come from. */
  to: string;
  account: Account;
}

export type { ChatState } from "./device.ts";

type Availability = { type: "available" } | { type: "unavailable"; last: number | "deny" };

export class FakePresence {
  readonly subscriptions: Subscription[] = [];
  private readonly current = new Map<Account, Availability>();

  constructor(
    private readonly host: PresenceHost,
    private readonly directory: Directory,
    private readonly log: (line: string) => void = () => {},
  ) {}

  /** Takes a companion's `<presence type=subscribe>`; false for any other stanza. */
  handle(source: { jid: string | undefined }, node: BinaryNode): boolean {
    if (node.tag !== "presence" || node.attrs.type !== "subscribe" || !source.jid) return false;
    const to = node.attrs.to ?? "";
    const target = this.directory.resolve(to);
    if (!target?.account) {
      this.log(`presence subscribe to unknown ${to}`);
      return true;
    }
    const subscription = { companion: source.jid, to, account: target.account };
    const known = this.subscriptions.some((s) => s.companion === source.jid && s.to === to);
    if (!known) this.subscriptions.push(subscription);
    const now = this.current.get(target.account);
    if (now) this.send(subscription, presenceNode(to, now));
    return true;
  }

  /** The companion's connection ended: WhatsApp keeps a subscription only as long as it. */
  forget(companion: string): void {
    const kept = this.subscriptions.filter((subscription) => subscription.companion !== companion);
    this.subscriptions.splice(0, this.subscriptions.length, ...kept);
  }

  /** The contact opens WhatsApp. */
  online(account: Account): void {
    this.setAvailability(account, { type: "available" });
  }

  /** The contact leaves WhatsApp (`lastSeen` in epoch seconds; `deny` when they hide it). */
  offline(account: Account, lastSeen: number | "deny" = Math.floor(Date.now() / 1000)): void {
    this.setAvailability(account, { type: "unavailable", last: lastSeen });
  }

  /** The contact types (`composing`), records a voice note, or stops (`paused`) in their chat. */
  chatState(account: Account, state: ChatState): void {
    const child: BinaryNode =
      state === "recording"
        ? { tag: "composing", attrs: { media: "audio" } }
        : { tag: state === "composing" ? "composing" : "paused", attrs: {} };
    for (const subscription of this.subscribersOf(account)) {
      this.send(subscription, { tag: "chatstate", attrs: { from: subscription.to }, content: [child] });
    }
  }

  private setAvailability(account: Account, availability: Availability): void {
    this.current.set(account, availability);
    for (const subscription of this.subscribersOf(account)) {
      this.send(subscription, presenceNode(subscription.to, availability));
    }
  }

  private subscribersOf(account: Account): Subscription[] {
    return this.subscriptions.filter((subscription) => subscription.account === account);
  }

  /** Presence is not queued: a companion that is away misses it. */
  private send(subscription: Subscription, node: BinaryNode): void {
    if (this.host.isConnected(subscription.companion)) this.host.deliver(subscription.companion, node);
  }
}

function presenceNode(from: string, availability: Availability): BinaryNode {
  return {
    tag: "presence",
    attrs: {
      from,
      type: availability.type,
      ...(availability.type === "unavailable" ? { last: String(availability.last) } : {}),
    },
  };
}
