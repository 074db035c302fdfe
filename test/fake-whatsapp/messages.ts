/**
 * Messaging on the fake server: the directory queries (usync.ts), group requests (`iq w:g2`: group-iq.ts),
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
import { type Account, type Companion, Directory } from "./directory.ts";
import { GroupIq, isGroupIq } from "./group-iq.ts";
import { type FakeGroup, GroupRegistry } from "./group-registry.ts";
import { FakeMediaHost } from "./media.ts";
import { isKeyFetch, isUsyncQuery, keyFetchReply, usyncReply } from "./usync.ts";

export type { FakeGroup } from "./group-registry.ts";

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

const now = () => String(Math.floor(Date.now() / 1000));

export class Messaging {
  readonly directory: Directory;
  /** Every group on the network (group-registry.ts): what members send to, and what `w:g2` answers. */
  readonly groups: GroupRegistry;
  /** The group JID of every metadata query (`iq w:g2` `query`) answered, in order: what a send cost. */
  readonly groupQueries: string[] = [];
  /** The media host, once a test asked for one (`enableMedia`); until then `media_conn` gets nothing useful. */
  media: FakeMediaHost | undefined;
  /** Reasons to refuse a companion's message (an ack `error` code, e.g. 463: account-limits.ts). */
  readonly refusals: Array<(sender: string, node: BinaryNode) => string | undefined> = [];
  private readonly groupIq: GroupIq;

  constructor(private readonly host: MessagingHost) {
    this.directory = new Directory(() => host.companions());
    this.groups = new GroupRegistry({
      directory: this.directory,
      deliver: (jid, node) => host.deliver(jid, node),
      log: (line) => host.log(line),
    });
    this.groupIq = new GroupIq(this.groups);
  }

  /** Answers or routes the stanza if it is messaging's; false leaves it to the server. */
  async handle(source: StanzaSource, node: BinaryNode): Promise<boolean> {
    const mediaConn = this.media?.mediaConnReply(node);
    if (isUsyncQuery(node)) source.send(usyncReply(node, this.directory));
    else if (isKeyFetch(node)) source.send(await keyFetchReply(node, this.directory));
    else if (isGroupIq(node) && source.jid) {
      if (getBinaryNodeChild(node, "query")) this.groupQueries.push(node.attrs.to ?? "");
      const account = this.directory.account(jidDecode(source.jid)?.user ?? "");
      source.send(this.groupIq.answer(source.jid, account, node));
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

  /**
   * A group on the fake network, `creator` its superadmin; `members` (accounts) are in it from the
   * start. Nobody is told: it is as if the group existed before the test (`groups.create` tells them).
   */
  createGroup(subject: string, creator: Account, members: Account[]): FakeGroup {
    const { group } = this.groups.create(creator, subject, [], "lid", { silent: true });
    for (const member of members) if (!group.members.includes(member)) group.members.push(member);
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
}
