/**
 * WhatsApp's answers to a companion's group requests (`iq xmlns=w:g2`, Baileys' lib/Socket/groups.js):
 * to `@g.us` — `participating`, `create`, `leave`, `invite code=…` (join, or `get`: the group behind
 * a code); to a group — `query`, `add`/`remove`/`promote`/`demote` (a status per participant),
 * `subject`, `description` (`prev` checked), `announcement`/`not_announcement`/`locked`/`unlocked`,
 * `invite` (get, or set: revoke), `ephemeral`/`not_ephemeral`. The registry applies the change and
 * tells the members; a refusal is the iq `error` WhatsApp sends (403 not an admin, 404 not a member).
 */
import { type BinaryNode, getBinaryNodeChildren } from "@whiskeysockets/baileys";
import type { Account } from "./directory.ts";
import { groupNode } from "./group-nodes.ts";
import {
  type FakeGroup,
  GroupRefusal,
  type GroupRegistry,
  type GroupSetting,
  type ParticipantAction,
  type ParticipantResult,
} from "./group-registry.ts";

const SETTINGS = new Set(["announcement", "not_announcement", "locked", "unlocked"]);
const ACTIONS = new Set(["add", "remove", "promote", "demote"]);

export const isGroupIq = (node: BinaryNode): boolean =>
  node.tag === "iq" &&
  node.attrs.xmlns === "w:g2" &&
  (node.attrs.type === "get" || node.attrs.type === "set");

const text = (node: BinaryNode | undefined): string | undefined => {
  const content = node?.content;
  if (typeof content === "string") return content;
  return content instanceof Uint8Array ? Buffer.from(content).toString() : undefined;
};

function reply(request: BinaryNode, content?: BinaryNode[]): BinaryNode {
  return {
    tag: "iq",
    attrs: { id: request.attrs.id ?? "", type: "result", from: request.attrs.to ?? "@g.us" },
    ...(content ? { content } : {}),
  };
}

function refusal(request: BinaryNode, { code, text }: GroupRefusal): BinaryNode {
  return {
    tag: "iq",
    attrs: { id: request.attrs.id ?? "", type: "error", from: request.attrs.to ?? "@g.us" },
    content: [{ tag: "error", attrs: { code: String(code), text } }],
  };
}

/** One participant's line in the answer: addressed as the group addresses members, or as asked. */
function resultNode(result: ParticipantResult, group: FakeGroup): BinaryNode {
  const error: Record<string, string> = result.status === "200" ? {} : { error: result.status };
  const { account } = result;
  if (!account) return { tag: "participant", attrs: { jid: result.asked, ...error } };
  const pn = `${account.pnUser}@s.whatsapp.net`;
  const lid = `${account.lidUser}@lid`;
  const attrs: Record<string, string> =
    group.addressing === "lid" ? { jid: lid, phone_number: pn } : { jid: pn, lid };
  return { tag: "participant", attrs: { ...attrs, ...error } };
}

const participantsOf = (node: BinaryNode) =>
  getBinaryNodeChildren(node, "participant").map((participant) => participant.attrs.jid ?? "");

export class GroupIq {
  constructor(private readonly registry: GroupRegistry) {}

  /** The answer to `request` from a device of `account` (`device` is its JID, for the record). */
  answer(device: string, account: Account | undefined, request: BinaryNode): BinaryNode {
    const [child] = Array.isArray(request.content) ? request.content : [];
    const to = request.attrs.to ?? "";
    this.registry.requests.push({ device, kind: child?.tag ?? "", to });
    try {
      if (!child) throw new GroupRefusal(400, "bad-request");
      if (!account) {
        if (child.tag === "participating") return reply(request, [{ tag: "groups", attrs: {} }]);
        throw new GroupRefusal(401, "not-authorized");
      }
      const content =
        to === "@g.us" ? this.onServer(account, request, child) : this.onGroup(account, request, child);
      return reply(request, content);
    } catch (error) {
      if (error instanceof GroupRefusal) return refusal(request, error);
      throw error;
    }
  }

  /** Requests to `@g.us`: the account's groups, a new group, leaving, an invite code. */
  private onServer(account: Account, request: BinaryNode, child: BinaryNode): BinaryNode[] {
    const registry = this.registry;
    switch (child.tag) {
      case "participating":
        return [{ tag: "groups", attrs: {}, content: registry.groupsOf(account).map(groupNode) }];
      case "create": {
        const subject = child.attrs.subject;
        if (!subject) throw new GroupRefusal(400, "bad-request");
        return [groupNode(registry.create(account, subject, participantsOf(child)).group)];
      }
      case "leave": {
        const groups = getBinaryNodeChildren(child, "group").map((node) => node.attrs.id ?? "");
        for (const jid of groups) registry.leave(account, this.group(jid));
        return [{ tag: "leave", attrs: {}, content: groups.map((id) => ({ tag: "group", attrs: { id } })) }];
      }
      case "invite": {
        const code = child.attrs.code ?? "";
        if (request.attrs.type === "get") {
          const group = registry.all().find((candidate) => candidate.inviteCode === code);
          if (!group) throw new GroupRefusal(400, "bad-request");
          return [groupNode(group)];
        }
        return [{ tag: "group", attrs: { jid: registry.join(account, code).jid } }];
      }
      default:
        throw new GroupRefusal(400, "bad-request");
    }
  }

  /** Requests to one group: its metadata, or a change to it. */
  private onGroup(account: Account, request: BinaryNode, child: BinaryNode): BinaryNode[] | undefined {
    const registry = this.registry;
    const group = this.group(request.attrs.to ?? "");
    if (!group.members.includes(account)) throw new GroupRefusal(404, "item-not-found");
    if (ACTIONS.has(child.tag)) {
      const results = registry.changeParticipants(
        account,
        group,
        child.tag as ParticipantAction,
        participantsOf(child),
      );
      return [{ tag: child.tag, attrs: {}, content: results.map((result) => resultNode(result, group)) }];
    }
    if (SETTINGS.has(child.tag)) {
      registry.setSetting(account, group, child.tag as GroupSetting);
      return undefined;
    }
    switch (child.tag) {
      case "query":
        return [groupNode(group)];
      case "subject":
        registry.setSubject(account, group, text(child) ?? "");
        return undefined;
      case "description": {
        const body = getBinaryNodeChildren(child, "body")[0];
        const description = child.attrs.delete === "true" ? undefined : text(body);
        registry.setDescription(account, group, description, child.attrs.prev);
        return undefined;
      }
      case "invite": {
        const code =
          request.attrs.type === "set"
            ? registry.revokeInvite(account, group)
            : registry.inviteCodeFor(account, group);
        return [{ tag: "invite", attrs: { code } }];
      }
      case "ephemeral":
      case "not_ephemeral":
        registry.setEphemeral(account, group, Number(child.attrs.expiration ?? 0));
        return undefined;
      default:
        throw new GroupRefusal(400, "bad-request");
    }
  }

  private group(jid: string): FakeGroup {
    const group = this.registry.get(jid);
    if (!group) throw new GroupRefusal(404, "item-not-found");
    return group;
  }
}
