/**
 * Groups as WhatsApp writes them on the wire: the `<group>` node (`extractGroupMetadata` reads it: an
 * iq answer, or inside a `create` notification), a participant, and the `w:gp2` notification about a
 * change. A LID-addressed group names people by LID with their number alongside (`phone_number`,
 * `participant_pn`, `creator_pn`), as WhatsApp does now; an older, number-addressed one by number,
 * with the LID alongside.
 */
import { randomBytes } from "node:crypto";
import { type BinaryNode, jidDecode } from "@whiskeysockets/baileys";
import type { Account } from "./directory.ts";

export type Role = "admin" | "superadmin";
export interface FakeGroup {
  /** `<digits>@g.us`. */
  jid: string;
  subject: string;
  subjectOwner: Account;
  /** Seconds since the epoch. */
  subjectTime: number;
  description: { text: string; id: string; author: Account; time: number } | undefined;
  creator: Account;
  /** Seconds since the epoch. */
  created: number;
  /** Members in the order they joined; the creator first. */
  members: Account[];
  admins: Map<Account, Role>;
  /** Only admins may send. */
  announce: boolean;
  /** Only admins may edit the group info. */
  locked: boolean;
  /** Disappearing-messages timer in seconds; 0 is off. */
  ephemeral: number;
  inviteCode: string;
  /** Codes revoked since: joining with one is refused `406`, not `400` (unknown), as on WhatsApp. */
  revokedCodes: Set<string>;
  /** How WhatsApp addresses its members: by LID (new groups) or by phone number (older groups). */
  addressing: "lid" | "pn";
}

const pn = (account: Account) => `${account.pnUser}@s.whatsapp.net`;
const lid = (account: Account) => `${account.lidUser}@lid`;

/** Someone's address in this group, and the other one (the attribute names differ by addressing). */
function addressOf(account: Account, group: FakeGroup) {
  return group.addressing === "lid"
    ? { jid: lid(account), alt: pn(account), altName: "phone_number" }
    : { jid: pn(account), alt: lid(account), altName: "lid" };
}

export function participantNode(account: Account, group: FakeGroup, withRole = false): BinaryNode {
  const { jid, alt, altName } = addressOf(account, group);
  const role = withRole ? group.admins.get(account) : undefined;
  return { tag: "participant", attrs: { jid, [altName]: alt, ...(role ? { type: role } : {}) } };
}

/** The person attributes of a node (`participant` + its number or LID), e.g. a notification's author. */
function authorAttrs(account: Account, group: FakeGroup, name: string): Record<string, string> {
  return group.addressing === "lid"
    ? { [name]: lid(account), [`${name}_pn`]: pn(account) }
    : { [name]: pn(account), [`${name}_lid`]: lid(account) };
}

function settingNodes(group: FakeGroup): BinaryNode[] {
  const nodes: BinaryNode[] = [];
  if (group.description) {
    const { text, id, author, time } = group.description;
    nodes.push({
      tag: "description",
      attrs: { id, t: String(time), ...authorAttrs(author, group, "participant") },
      content: [{ tag: "body", attrs: {}, content: Buffer.from(text) }],
    });
  }
  if (group.announce) nodes.push({ tag: "announcement", attrs: {} });
  if (group.locked) nodes.push({ tag: "locked", attrs: {} });
  if (group.ephemeral) nodes.push({ tag: "ephemeral", attrs: { expiration: String(group.ephemeral) } });
  return nodes;
}

/** The whole group, as `groupMetadata`, `groupFetchAllParticipating` and `groupCreate` read it. */
export function groupNode(group: FakeGroup): BinaryNode {
  const creator = addressOf(group.creator, group);
  const subjectOwner = addressOf(group.subjectOwner, group);
  const alts = group.addressing === "lid";
  return {
    tag: "group",
    attrs: {
      id: jidDecode(group.jid)?.user ?? group.jid,
      subject: group.subject,
      s_t: String(group.subjectTime),
      s_o: subjectOwner.jid,
      ...(alts ? { s_o_pn: subjectOwner.alt } : {}),
      creation: String(group.created),
      creator: creator.jid,
      ...(alts ? { creator_pn: creator.alt } : {}),
      addressing_mode: group.addressing,
      size: String(group.members.length),
    },
    content: [...group.members.map((member) => participantNode(member, group, true)), ...settingNodes(group)],
  };
}

/**
 * `<notification type=w:gp2 from=<group> participant=<author>>` with the change as its child
 * (`add`, `remove`, `promote`, `demote`, `subject`, `description`, `announcement`, `locked`, `create`, …).
 */
export function gp2Notification(group: FakeGroup, author: Account, change: BinaryNode): BinaryNode {
  return {
    tag: "notification",
    attrs: {
      from: group.jid,
      type: "w:gp2",
      id: randomBytes(8).toString("hex").toUpperCase(),
      t: String(Math.floor(Date.now() / 1000)),
      addressing_mode: group.addressing,
      ...authorAttrs(author, group, "participant"),
    },
    content: [change],
  };
}
