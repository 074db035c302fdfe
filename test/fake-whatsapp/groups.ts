/**
 * Groups the fake accounts are in, served the way WhatsApp answers `iq xmlns=w:g2`: `participating`
 * (every group of the account, what `groupFetchAllParticipating` asks on connect) and `query` to a
 * group JID (one group's metadata, `groupMetadata`). A `dirty type=groups` push tells a connected
 * device that its groups changed, as WhatsApp does after a change made elsewhere.
 */
import type { BinaryNode } from "@whiskeysockets/baileys";
import { type FakeWhatsApp, type LinkedDevice, SERVER_JID } from "./server.ts";

export interface FakeGroupMember {
  /** A phone JID (`<number>@s.whatsapp.net`). */
  jid: string;
  admin?: "admin" | "superadmin";
}

export interface FakeGroup {
  /** `<digits>@g.us`. */
  jid: string;
  subject: string;
  description?: string;
  creator: string;
  /** Epoch seconds. */
  creation: number;
  members: FakeGroupMember[];
  announce?: boolean;
}

const userOf = (jid: string) => jid.split("@")[0]?.split(":")[0] ?? jid;

function groupNode(group: FakeGroup): BinaryNode {
  const content: BinaryNode[] = group.members.map((member) => ({
    tag: "participant",
    attrs: { jid: member.jid, ...(member.admin ? { type: member.admin } : {}) },
  }));
  if (group.description) {
    content.push({
      tag: "description",
      attrs: { id: "DESC1", participant: group.creator, t: String(group.creation) },
      content: [{ tag: "body", attrs: {}, content: Buffer.from(group.description) }],
    });
  }
  if (group.announce) content.push({ tag: "announcement", attrs: {} });
  return {
    tag: "group",
    attrs: {
      id: userOf(group.jid),
      subject: group.subject,
      s_t: String(group.creation),
      s_o: group.creator,
      creation: String(group.creation),
      creator: group.creator,
      size: String(group.members.length),
    },
    content,
  };
}

export class FakeGroups {
  readonly groups = new Map<string, FakeGroup>();
  /** Every w:g2 request a device made, by kind (`participating`, `query`): a test sees fetches this way. */
  readonly requests: Array<{ device: string; kind: string; to: string }> = [];

  constructor(private readonly server: FakeWhatsApp) {
    server.iqHandlers.set("w:g2", (device, iq) => this.answer(device, iq));
  }

  add(group: FakeGroup): void {
    this.groups.set(group.jid, group);
  }

  /** The groups `device`'s account is a member of. */
  groupsOf(device: LinkedDevice): FakeGroup[] {
    const user = userOf(device.jid);
    return [...this.groups.values()].filter((group) => group.members.some((m) => userOf(m.jid) === user));
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

  private answer(device: LinkedDevice, iq: BinaryNode): BinaryNode[] | undefined {
    const [request] = Array.isArray(iq.content) ? iq.content : [];
    if (!request) return undefined;
    this.requests.push({ device: device.jid, kind: request.tag, to: iq.attrs.to ?? "" });
    if (request.tag === "participating") {
      return [{ tag: "groups", attrs: {}, content: this.groupsOf(device).map(groupNode) }];
    }
    if (request.tag === "query") {
      const group = this.groups.get(iq.attrs.to ?? "");
      if (group && this.groupsOf(device).includes(group)) return [groupNode(group)];
      return [{ tag: "error", attrs: { code: "404", text: "item-not-found" } }];
    }
    return undefined;
  }
}
