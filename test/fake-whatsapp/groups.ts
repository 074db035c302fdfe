/**
 * Groups that existed before the test, written the short way (members by phone JID), put into the
 * network's one group registry (`server.messaging.groups`, group-registry.ts) as older groups are:
 * addressed by phone number. A number no fake account has yet becomes an account without devices.
 * `markDirty` sends `ib/dirty type=groups`, as WhatsApp does after a change made elsewhere.
 */
import { randomInt } from "node:crypto";
import type { Account } from "./directory.ts";
import type { FakeGroup, GroupRegistry } from "./group-registry.ts";
import { type FakeWhatsApp, type LinkedDevice, SERVER_JID } from "./server.ts";

export interface PresetMember {
  /** A phone JID (`<number>@s.whatsapp.net`). */
  jid: string;
  admin?: "admin" | "superadmin";
}

export interface PresetGroup {
  /** `<digits>@g.us`. */
  jid: string;
  subject: string;
  description?: string;
  /** A phone JID. */
  creator: string;
  /** Epoch seconds. */
  creation: number;
  members: PresetMember[];
  announce?: boolean;
}

const userOf = (jid: string) => jid.split("@")[0]?.split(":")[0] ?? jid;

export class FakeGroups {
  private readonly registry: GroupRegistry;

  constructor(private readonly server: FakeWhatsApp) {
    this.registry = server.messaging.groups;
  }

  /** Every w:g2 request a device made, by kind (`participating`, `query`, …): a test sees fetches this way. */
  get requests(): Array<{ device: string; kind: string; to: string }> {
    return this.registry.requests;
  }

  add(preset: PresetGroup): FakeGroup {
    const creator = this.account(preset.creator);
    const members = preset.members.map((member) => this.account(member.jid));
    const admins = new Map(
      preset.members.flatMap((member, i) => (member.admin && members[i] ? [[members[i], member.admin]] : [])),
    );
    return this.registry.put({
      jid: preset.jid,
      subject: preset.subject,
      subjectOwner: creator,
      subjectTime: preset.creation,
      description: preset.description
        ? { text: preset.description, id: "DESC1", author: creator, time: preset.creation }
        : undefined,
      creator,
      created: preset.creation,
      members,
      admins: admins as FakeGroup["admins"],
      announce: preset.announce ?? false,
      locked: false,
      ephemeral: 0,
      inviteCode: `PRESET${randomInt(10 ** 9)}`,
      revokedCodes: new Set(),
      addressing: "pn",
    });
  }

  /** Tells the device its groups changed (`ib` `dirty type=groups`); Baileys then fetches them all. */
  markDirty(device: LinkedDevice): void {
    this.server.deliver(device.jid, {
      tag: "ib",
      attrs: { from: SERVER_JID },
      content: [
        { tag: "dirty", attrs: { type: "groups", timestamp: String(Math.floor(Date.now() / 1000)) } },
      ],
    });
  }

  /** The account behind a phone JID, registered (without devices) if nobody has that number yet. */
  private account(jid: string): Account {
    const directory = this.server.messaging.directory;
    const user = userOf(jid);
    const known = directory.account(user);
    if (known) return known;
    const account: Account = {
      pnUser: user,
      lidUser: String(randomInt(10 ** 13, 10 ** 14)),
      devices: new Map(),
    };
    directory.register(account);
    return account;
  }
}
