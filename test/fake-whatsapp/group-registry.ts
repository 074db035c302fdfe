/**
 * The fake network's one group registry: what every group is (subject, description, settings, invite
 * code, members and admins), changed the way WhatsApp's server changes it — admin rules checked, one
 * status per participant — whoever asks: a Baileys companion by `iq w:g2` (group-iq.ts) or a fake
 * contact acting from its phone (contact.ts). Each change is announced to every member's companions as
 * WhatsApp does, by a `w:gp2` notification (group-nodes.ts).
 */
import { randomBytes } from "node:crypto";
import type { BinaryNode } from "@whiskeysockets/baileys";
import type { Account, Directory } from "./directory.ts";
import { type FakeGroup, gp2Notification, groupNode as groupNodeOf, participantNode } from "./group-nodes.ts";

export type { FakeGroup, Role } from "./group-nodes.ts";

export type ParticipantAction = "add" | "remove" | "promote" | "demote";
export type GroupSetting = "announcement" | "not_announcement" | "locked" | "unlocked";

/** WhatsApp's answer to a refused group request (the iq `error`). */
export class GroupRefusal extends Error {
  constructor(
    readonly code: number,
    readonly text: string,
  ) {
    super(`${code} ${text}`);
  }
}

export interface ParticipantResult {
  /** The participant as asked (a phone-number or LID JID). */
  asked: string;
  account: Account | undefined;
  /** "200", or WhatsApp's error: 403 not allowed, 404 not on WhatsApp / not a member, 409 already in. */
  status: string;
}

/** Where notifications go (messaging's host): the companions of an account and the live connections. */
export interface GroupHost {
  directory: Directory;
  /** Hands it over, or keeps it for a device that is away (the server's offline queue). */
  deliver(jid: string, node: BinaryNode): void;
  log(line: string): void;
}

const now = () => Math.floor(Date.now() / 1000);
const inviteCode = () => randomBytes(16).toString("base64url").replace(/[-_]/g, "").slice(0, 22);

export class GroupRegistry {
  private readonly groups = new Map<string, FakeGroup>();
  /** Every `w:g2` request a device made (`participating`, `query`, `add`, `subject`, …), in order. */
  readonly requests: Array<{ device: string; kind: string; to: string }> = [];
  /** Every `w:gp2` notification handed to a companion, in order: what each member's devices saw. */
  readonly notifications: Array<{ to: string; node: BinaryNode }> = [];
  private nextGroup = 1;

  constructor(private readonly host: GroupHost) {}

  get(jid: string): FakeGroup | undefined {
    return this.groups.get(jid);
  }

  has(jid: string): boolean {
    return this.groups.has(jid);
  }

  all(): FakeGroup[] {
    return [...this.groups.values()];
  }

  /** The groups `account` is a member of. */
  groupsOf(account: Account): FakeGroup[] {
    return this.all().filter((group) => group.members.includes(account));
  }

  /** A group as WhatsApp keeps it; nobody is told (a group that existed before the test). */
  put(group: FakeGroup): FakeGroup {
    this.groups.set(group.jid, group);
    return group;
  }

  /** A new group, `creator` its superadmin; members that exist are in it, and each is told (`create`). */
  create(
    creator: Account,
    subject: string,
    asked: string[],
    addressing: "lid" | "pn" = "lid",
    { silent = false }: { silent?: boolean } = {},
  ): { group: FakeGroup; results: ParticipantResult[] } {
    const created = now();
    const group = this.put({
      jid: `1203630${String(Date.now()).slice(-8)}${this.nextGroup++}@g.us`,
      subject,
      subjectOwner: creator,
      subjectTime: created,
      description: undefined,
      creator,
      created,
      members: [creator],
      admins: new Map([[creator, "superadmin"]]),
      announce: false,
      locked: false,
      ephemeral: 0,
      inviteCode: inviteCode(),
      revokedCodes: new Set(),
      addressing,
    });
    const results = asked.map((jid) => {
      const account = this.accountOf(jid);
      if (account && !group.members.includes(account)) group.members.push(account);
      return { asked: jid, account, status: account ? "200" : "404" };
    });
    if (!silent) this.notify(group, creator, { tag: "create", attrs: {}, content: [groupNodeOf(group)] });
    return { group, results };
  }

  /** add / remove / promote / demote, by an admin: one status per participant, as WhatsApp answers. */
  changeParticipants(
    actor: Account,
    group: FakeGroup,
    action: ParticipantAction,
    asked: string[],
  ): ParticipantResult[] {
    this.requireAdmin(actor, group);
    const results = asked.map((jid) => this.changeOne(group, action, jid));
    const changed = results.flatMap((result) => (result.status === "200" && result.account) || []);
    if (changed.length > 0) {
      const nodes = changed.map((account) => participantNode(account, group));
      this.notify(
        group,
        actor,
        { tag: action, attrs: {}, content: nodes },
        action === "remove" ? changed : [],
      );
    }
    return results;
  }

  /** A member goes; the group goes with its last member. */
  leave(account: Account, group: FakeGroup): void {
    if (!group.members.includes(account)) throw new GroupRefusal(404, "item-not-found");
    this.drop(group, account);
    this.notify(group, account, { tag: "remove", attrs: {}, content: [participantNode(account, group)] }, [
      account,
    ]);
    if (group.members.length === 0) this.groups.delete(group.jid);
  }

  setSubject(actor: Account, group: FakeGroup, subject: string): void {
    this.requireEditor(actor, group);
    group.subject = subject;
    group.subjectOwner = actor;
    group.subjectTime = now();
    const owner = group.addressing === "lid" ? lidOf(actor) : pnOf(actor);
    this.notify(group, actor, {
      tag: "subject",
      attrs: { subject, s_o: owner, s_t: String(group.subjectTime) },
    });
  }

  /** `prev` must name the current description (409 otherwise: someone changed it meanwhile). */
  setDescription(actor: Account, group: FakeGroup, text: string | undefined, prev: string | undefined): void {
    this.requireEditor(actor, group);
    if (group.description && prev !== group.description.id) throw new GroupRefusal(409, "conflict");
    const id = randomBytes(8).toString("hex").toUpperCase();
    const before = group.description?.id;
    group.description = text ? { text, id, author: actor, time: now() } : undefined;
    this.notify(group, actor, {
      tag: "description",
      attrs: { id, ...(before ? { prev: before } : {}), ...(text ? {} : { delete: "true" }) },
      ...(text ? { content: [{ tag: "body", attrs: {}, content: Buffer.from(text) }] } : {}),
    });
  }

  setSetting(actor: Account, group: FakeGroup, setting: GroupSetting): void {
    this.requireAdmin(actor, group);
    if (setting === "announcement" || setting === "not_announcement")
      group.announce = setting === "announcement";
    else group.locked = setting === "locked";
    this.notify(group, actor, { tag: setting, attrs: {} });
  }

  setEphemeral(actor: Account, group: FakeGroup, seconds: number): void {
    this.requireEditor(actor, group);
    group.ephemeral = seconds;
    this.notify(
      group,
      actor,
      seconds
        ? { tag: "ephemeral", attrs: { expiration: String(seconds) } }
        : { tag: "not_ephemeral", attrs: {} },
    );
  }

  /** The current invite link's code (admins only). */
  inviteCodeFor(actor: Account, group: FakeGroup): string {
    this.requireAdmin(actor, group);
    return group.inviteCode;
  }

  /** A new code; the old one stops working. */
  revokeInvite(actor: Account, group: FakeGroup): string {
    this.requireAdmin(actor, group);
    group.revokedCodes.add(group.inviteCode);
    group.inviteCode = inviteCode();
    return group.inviteCode;
  }

  /** Joins by invite code: 400 for a code that never existed, 406 for a revoked one. */
  join(account: Account, code: string): FakeGroup {
    const group = this.all().find((candidate) => candidate.inviteCode === code);
    if (!group) {
      const revoked = this.all().some((candidate) => candidate.revokedCodes.has(code));
      throw revoked ? new GroupRefusal(406, "not-acceptable") : new GroupRefusal(400, "bad-request");
    }
    if (!group.members.includes(account)) {
      group.members.push(account);
      const node = { tag: "add", attrs: { reason: "invite" }, content: [participantNode(account, group)] };
      this.notify(group, account, node);
    }
    return group;
  }

  private changeOne(group: FakeGroup, action: ParticipantAction, jid: string): ParticipantResult {
    const account = this.accountOf(jid);
    const status = (code: string): ParticipantResult => ({ asked: jid, account, status: code });
    if (!account) return status("404");
    const member = group.members.includes(account);
    if (action === "add") {
      if (member) return status("409");
      group.members.push(account);
      return status("200");
    }
    if (!member) return status("404");
    // The creator cannot be removed or demoted by another admin.
    if (group.admins.get(account) === "superadmin" && action !== "promote") return status("403");
    if (action === "remove") this.drop(group, account);
    else if (action === "promote") group.admins.set(account, "admin");
    else group.admins.delete(account);
    return status("200");
  }

  private drop(group: FakeGroup, account: Account): void {
    group.members = group.members.filter((member) => member !== account);
    group.admins.delete(account);
  }

  private accountOf(jid: string): Account | undefined {
    const user = jid.split("@")[0]?.split(":")[0] ?? "";
    return this.host.directory.account(user);
  }

  private requireMember(actor: Account, group: FakeGroup): void {
    if (!group.members.includes(actor)) throw new GroupRefusal(404, "item-not-found");
  }

  private requireAdmin(actor: Account, group: FakeGroup): void {
    this.requireMember(actor, group);
    if (!group.admins.has(actor)) throw new GroupRefusal(403, "forbidden");
  }

  /** Group info: anyone in an unlocked group, only admins in a locked one. */
  private requireEditor(actor: Account, group: FakeGroup): void {
    this.requireMember(actor, group);
    if (group.locked && !group.admins.has(actor)) throw new GroupRefusal(403, "forbidden");
  }

  /**
   * `<notification type=w:gp2>` to every companion of every member (the actor's own included, as
   * WhatsApp does) and of `alsoTell` (who was just removed); a device that is away gets it at its next
   * login (the server's offline queue).
   */
  private notify(group: FakeGroup, actor: Account, child: BinaryNode, alsoTell: Account[] = []): void {
    const node = gp2Notification(group, actor, child);
    for (const account of new Set([...group.members, ...alsoTell])) {
      for (const companion of this.host.directory.companionsOf(account)) {
        this.notifications.push({ to: companion.jid, node });
        this.host.deliver(companion.jid, node);
      }
    }
  }
}

const pnOf = (account: Account) => `${account.pnUser}@s.whatsapp.net`;
const lidOf = (account: Account) => `${account.lidUser}@lid`;
