/**
 * Messaging on the fake server: the directory queries (usync.ts), group metadata (`iq w:g2` `query`),
 * and routing of the `message` stanzas a companion sends: its `participants/to/enc` fan-out (and a
 * group's `skmsg`) to each recipient device, which decrypts it, then the server's `ack`.
 */
import {
  type BinaryNode,
  getBinaryNodeChild,
  getBinaryNodeChildren,
  isJidGroup,
  jidDecode,
} from "@whiskeysockets/baileys";
import type { FakeDevice } from "./device.ts";
import { type Account, type Companion, Directory, lidJid, pnJid } from "./directory.ts";
import { FakeMediaHost } from "./media.ts";
import { iqResult, isKeyFetch, isUsyncQuery, keyFetchReply, usyncReply } from "./usync.ts";

/** What messaging needs from the server (server.ts passes it in, so this module does not import it). */
export interface MessagingHost {
  companions(): Iterable<Companion>;
  /** Hands a stanza to a companion's live connection. */
  deliver(jid: string, node: BinaryNode): void;
  log(line: string): void;
}

/** The connection a stanza came on (server.ts's `ClientConnection`). */
export interface StanzaSource {
  jid: string | undefined;
  send(node: BinaryNode): void;
}

export interface FakeGroup {
  jid: string;
  subject: string;
  creator: Account;
  members: Account[];
  /** Seconds since the epoch. */
  created: number;
}

const now = () => String(Math.floor(Date.now() / 1000));

export class Messaging {
  readonly directory: Directory;
  readonly groups = new Map<string, FakeGroup>();
  /** The group JID of every metadata query (`iq w:g2` `query`) answered, in order: what a send cost. */
  readonly groupQueries: string[] = [];
  /** The media host, once a test asked for one (`enableMedia`); until then `media_conn` gets nothing useful. */
  media: FakeMediaHost | undefined;
  /** Reasons to refuse a companion's message (an ack `error` code, e.g. 463: account-limits.ts). */
  readonly refusals: Array<(sender: string, node: BinaryNode) => string | undefined> = [];
  private nextGroup = 1;

  constructor(private readonly host: MessagingHost) {
    this.directory = new Directory(() => host.companions());
  }

  /** Answers or routes the stanza if it is messaging's; false leaves it to the server. */
  async handle(source: StanzaSource, node: BinaryNode): Promise<boolean> {
    const mediaConn = this.media?.mediaConnReply(node);
    if (isUsyncQuery(node)) source.send(usyncReply(node, this.directory));
    else if (isKeyFetch(node)) source.send(await keyFetchReply(node, this.directory));
    else if (isGroupQuery(node) && this.groups.has(node.attrs.to ?? "")) {
      this.groupQueries.push(node.attrs.to ?? "");
      source.send(this.groupMetadataReply(node));
    } else if (mediaConn) source.send(mediaConn);
    else if (node.tag === "message" && source.jid) {
      const sender = source.jid;
      const refused = this.refusals.map((refusal) => refusal(sender, node)).find(Boolean);
      if (!refused) await this.route(sender, node);
      source.send({
        tag: "ack",
        attrs: {
          class: "message",
          id: node.attrs.id ?? "",
          from: node.attrs.to ?? "",
          t: now(),
          ...(refused ? { error: refused } : {}),
        },
      });
    } else return false;
    return true;
  }

  /** A group on the fake network; `members` include the creator (and the companion's account to let it in). */
  createGroup(subject: string, creator: Account, members: Account[]): FakeGroup {
    const jid = `1203630${String(Date.now()).slice(-8)}${this.nextGroup++}@g.us`;
    const group: FakeGroup = {
      jid,
      subject,
      creator,
      members: [creator, ...members.filter((member) => member !== creator)],
      created: Math.floor(Date.now() / 1000),
    };
    this.groups.set(jid, group);
    return group;
  }

  /** Starts the HTTPS media host that `media_conn` points clients at (uploads, and downloads by tests). */
  async enableMedia(): Promise<FakeMediaHost> {
    this.media ??= await FakeMediaHost.start();
    return this.media;
  }

  async close(): Promise<void> {
    await this.media?.close();
  }

  deliverToCompanion(jid: string, node: BinaryNode): void {
    this.host.deliver(jid, node);
  }

  /**
   * Each recipient device gets the `enc` addressed to it (by phone number or LID) and, in a group,
   * the one `skmsg` for everybody; the sending device itself gets nothing back.
   */
  private async route(sender: string, stanza: BinaryNode): Promise<void> {
    const to = stanza.attrs.to ?? "";
    const addressed = new Map<FakeDevice, BinaryNode[]>();
    for (const node of getBinaryNodeChildren(getBinaryNodeChild(stanza, "participants"), "to")) {
      const target = this.directory.resolve(node.attrs.jid ?? "");
      if (target?.kind === "device") addressed.set(target.device, getBinaryNodeChildren(node, "enc"));
      else if (target?.companion.jid !== sender) this.host.log(`no route to ${node.attrs.jid} (dropped)`);
    }
    const shared = getBinaryNodeChildren(stanza, "enc");
    // A resend after a retry receipt goes to one device, its `enc` directly in the stanza.
    const direct = isJidGroup(to) ? undefined : this.directory.resolve(to);
    if (direct?.kind === "device" && shared.length > 0 && !addressed.has(direct.device)) {
      addressed.set(direct.device, []);
    }
    const group = isJidGroup(to) ? this.groups.get(to) : undefined;
    const recipients = group
      ? group.members.flatMap((member) => [...member.devices.values()])
      : [...addressed.keys()];
    for (const device of recipients) {
      const encs = [...(addressed.get(device) ?? []), ...shared];
      if (encs.length > 0) await device.receive({ stanza, sender, encs });
    }
  }

  private groupMetadataReply(request: BinaryNode): BinaryNode {
    const group = this.groups.get(request.attrs.to ?? "");
    if (!group) {
      return {
        tag: "iq",
        attrs: { id: request.attrs.id ?? "", type: "error", from: request.attrs.to ?? "" },
        content: [{ tag: "error", attrs: { code: "404", text: "item-not-found" } }],
      };
    }
    return iqResult(request, [groupNode(group)]);
  }
}

/** A group as `extractGroupMetadata` reads it: LID-addressed, participants by LID with their numbers. */
export function groupNode(group: FakeGroup): BinaryNode {
  const created = String(group.created);
  return {
    tag: "group",
    attrs: {
      id: jidDecode(group.jid)?.user ?? group.jid,
      subject: group.subject,
      s_t: created,
      s_o: lidJid(group.creator),
      creation: created,
      creator: lidJid(group.creator),
      creator_pn: pnJid(group.creator),
      addressing_mode: "lid",
      size: String(group.members.length),
    },
    content: group.members.map((member) => ({
      tag: "participant",
      attrs: {
        jid: lidJid(member),
        phone_number: pnJid(member),
        ...(member === group.creator ? { type: "superadmin" } : {}),
      },
    })),
  };
}

const isGroupQuery = (node: BinaryNode) =>
  node.tag === "iq" &&
  node.attrs.xmlns === "w:g2" &&
  node.attrs.type === "get" &&
  isJidGroup(node.attrs.to) &&
  !!getBinaryNodeChild(node, "query");
