/**
 * The simulated WhatsApp's group operations, with WhatsApp's rules where the edge can tell: only members
 * see a group (404 otherwise), only admins change members, settings and invites (403 "Bot must be
 * admin"), and a locked group's info is admin-only too. Every change is reported to the simulated
 * members the way Baileys reports it (`groups` upsert/update, `group.participants`).
 */
import type { GroupInfo } from "../protocol/messaging.ts";
import type { GroupOperation } from "../protocol/operation-rules.ts";
import { OperationError, type PerformResult } from "../protocol/seam.ts";
import type { SimContext } from "./messages.ts";
import { type AdminRole, newInviteCode, randomDigits, type SimGroup, type SimWorld } from "./world.ts";

type Op<N extends GroupOperation["op"]> = Extract<GroupOperation, { op: N }>;

export interface NewGroup {
  subject: string;
  owner: string;
  members: Map<string, AdminRole>;
  isCommunity?: boolean;
  linkedParentJid?: string | null;
  announce?: boolean;
}

/** Creates a group and tells its simulated members (`groups` upsert, as Baileys' groups.upsert). */
export function createGroup(world: SimWorld, spec: NewGroup): SimGroup {
  let jid: string;
  do jid = `120363${randomDigits(12)}@g.us`;
  while (world.groups.has(jid));
  const group: SimGroup = {
    jid,
    subject: spec.subject.slice(0, 100),
    description: null,
    owner: spec.owner,
    creation: Math.floor(Date.now() / 1000),
    announce: spec.announce ?? false,
    restrict: false,
    ephemeral: 0,
    isCommunity: spec.isCommunity ?? false,
    linkedParentJid: spec.linkedParentJid ?? null,
    participants: spec.members,
    inviteCode: newInviteCode(),
    picture: false,
  };
  world.groups.set(jid, group);
  world.invites.set(group.inviteCode, jid);
  world.notifyGroup(group, { kind: "groups", action: "upsert", groups: [world.groupInfo(group)] });
  return group;
}

function update(world: SimWorld, group: SimGroup, changes: Omit<Partial<GroupInfo>, "jid">): void {
  world.notifyGroup(group, { kind: "groups", action: "update", groups: [{ jid: group.jid, ...changes }] });
}

/** Group info may be edited by anyone unless the group is locked (`restrict`). */
function requireInfoRight(world: SimWorld, group: SimGroup, me: string): void {
  if (group.restrict) world.requireAdmin(group, me);
}

function changeParticipants({ world, me }: SimContext, op: Op<"group.participants">): PerformResult {
  const group = world.memberGroup(me, op.jid);
  world.requireAdmin(group, me);
  const results: Array<{ jid: string; status: string }> = [];
  const changed: string[] = [];
  for (const jid of op.participants) {
    const role = group.participants.get(jid);
    const member = group.participants.has(jid);
    let status = "200";
    if (op.action === "add") {
      if (member) status = "409";
      else group.participants.set(jid, null);
    } else if (!member) status = "404";
    else if (op.action === "remove") group.participants.delete(jid);
    else if (op.action === "promote") group.participants.set(jid, role === "superadmin" ? role : "admin");
    else if (role === "superadmin")
      status = "403"; // the creator cannot be demoted
    else group.participants.set(jid, null);
    results.push({ jid, status });
    if (status === "200") changed.push(jid);
  }
  if (changed.length > 0) {
    const event = {
      kind: "group.participants" as const,
      jid: group.jid,
      action: op.action,
      participants: changed,
      author: me,
    };
    world.notifyGroup(group, event, op.action === "remove" ? changed : []);
    if (op.action === "add") {
      for (const jid of changed) {
        const added = world.accountByJid(jid);
        if (added)
          world.emitTo(added, { kind: "groups", action: "upsert", groups: [world.groupInfo(group)] });
      }
    }
  }
  return { data: results };
}

function acceptInvite({ world, me }: SimContext, code: string): PerformResult {
  const jid = world.invites.get(code);
  const group = jid ? world.groups.get(jid) : undefined;
  if (!group) throw new OperationError(400, "invalid or expired invite code");
  if (!group.participants.has(me)) {
    world.notifyGroup(group, {
      kind: "group.participants",
      jid: group.jid,
      action: "add",
      participants: [me],
    });
    group.participants.set(me, null);
    const account = world.accountByJid(me);
    if (account)
      world.emitTo(account, { kind: "groups", action: "upsert", groups: [world.groupInfo(group)] });
  }
  return { data: { jid: group.jid } };
}

function leave({ world, me }: SimContext, jid: string): PerformResult {
  const group = world.memberGroup(me, jid);
  group.participants.delete(me);
  const event = {
    kind: "group.participants" as const,
    jid,
    action: "remove",
    participants: [me],
    author: me,
  };
  world.notifyGroup(group, event, [me]);
  if (group.participants.size === 0) {
    world.groups.delete(jid);
    world.invites.delete(group.inviteCode);
  } else if (![...group.participants.values()].some(Boolean)) {
    // WhatsApp never leaves a group without an admin: the longest-standing member inherits.
    const heir = group.participants.keys().next();
    if (!heir.done) group.participants.set(heir.value, "admin");
  }
  return {};
}

export function performGroup(context: SimContext, op: GroupOperation): PerformResult {
  const { world, me } = context;
  switch (op.op) {
    case "group.create": {
      const members = new Map<string, AdminRole>([[me, "superadmin"]]);
      for (const jid of op.participants) if (jid !== me) members.set(jid, null);
      return { data: world.groupInfo(createGroup(world, { subject: op.subject, owner: me, members })) };
    }
    case "group.metadata":
      return { data: world.groupInfo(world.memberGroup(me, op.jid)) };
    case "group.list":
      return { data: world.groupsOf(me).map((group) => world.groupInfo(group)) };
    case "group.subject": {
      const group = world.memberGroup(me, op.jid);
      requireInfoRight(world, group, me);
      group.subject = op.subject;
      update(world, group, { subject: op.subject });
      return {};
    }
    case "group.description": {
      const group = world.memberGroup(me, op.jid);
      requireInfoRight(world, group, me);
      group.description = op.description || null;
      update(world, group, { description: group.description });
      return {};
    }
    case "group.participants":
      return changeParticipants(context, op);
    case "group.invite": {
      const group = world.memberGroup(me, op.jid);
      world.requireAdmin(group, me);
      return { data: { code: group.inviteCode } };
    }
    case "group.invite.revoke": {
      const group = world.memberGroup(me, op.jid);
      world.requireAdmin(group, me);
      world.invites.delete(group.inviteCode);
      group.inviteCode = newInviteCode();
      world.invites.set(group.inviteCode, group.jid);
      return { data: { code: group.inviteCode } };
    }
    case "group.invite.accept":
      return acceptInvite(context, op.code);
    case "group.setting": {
      const group = world.memberGroup(me, op.jid);
      world.requireAdmin(group, me);
      if (op.setting === "announcement" || op.setting === "not_announcement") {
        group.announce = op.setting === "announcement";
        update(world, group, { announce: group.announce });
      } else {
        group.restrict = op.setting === "locked";
        update(world, group, { restrict: group.restrict });
      }
      return {};
    }
    case "group.ephemeral": {
      const group = world.memberGroup(me, op.jid);
      requireInfoRight(world, group, me);
      group.ephemeral = op.expiration;
      update(world, group, { ephemeral: op.expiration });
      return {};
    }
    case "group.leave":
      return leave(context, op.jid);
  }
}
