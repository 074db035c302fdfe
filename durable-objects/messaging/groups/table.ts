import type { GroupInfo, NetworkEvent } from "../../../bridge/src/protocol/messaging";
import type { SessionContext } from "../context";

/**
 * The groups this account is in, as last reported by WhatsApp (events) or fetched by an operation.
 * Every change goes through `mergeGroup` / `changeParticipants`, which emit a webhook event only when
 * the stored group actually changed: an operation's own result and the network's echo of it then
 * produce one event, whichever of the two arrives first.
 */

export const GROUPS_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS groups (
     jid TEXT PRIMARY KEY, subject TEXT NOT NULL, description TEXT, owner TEXT, creation INTEGER,
     announce INTEGER NOT NULL DEFAULT 0, restrict INTEGER NOT NULL DEFAULT 0,
     ephemeral INTEGER NOT NULL DEFAULT 0, is_community INTEGER NOT NULL DEFAULT 0, linked_parent_jid TEXT,
     participants TEXT NOT NULL DEFAULT '[]', invite_code TEXT, updated_at INTEGER NOT NULL)`,
];

export type Participant = { id: string; admin: "admin" | "superadmin" | null };

type GroupRow = {
  jid: string;
  subject: string;
  description: string | null;
  owner: string | null;
  creation: number | null;
  announce: number;
  restrict: number;
  ephemeral: number;
  is_community: number;
  linked_parent_jid: string | null;
  participants: string;
  invite_code: string | null;
  updated_at: number;
};

/** A group as the API shows it. `id`/`desc` are the spec's names, `jid`/`description` the reference's. */
export interface GroupResource {
  id: string;
  jid: string;
  subject: string;
  desc: string | null;
  description: string | null;
  owner: string | null;
  size: number;
  isCommunity: boolean;
  linkedParentJid: string | null;
  participants: Participant[];
  announce: boolean;
  restrict: boolean;
  ephemeral: number;
  /** Epoch seconds, as WhatsApp reports it. */
  creation: number | null;
  inviteCode: string | null;
}

/** The fields a change can touch, in the API's names (what `group.update` carries). */
type GroupFields = Omit<GroupResource, "id" | "jid" | "desc" | "size">;

function fieldsOf(row: GroupRow): GroupFields {
  return {
    subject: row.subject,
    description: row.description,
    owner: row.owner,
    isCommunity: row.is_community === 1,
    linkedParentJid: row.linked_parent_jid,
    participants: JSON.parse(row.participants) as Participant[],
    announce: row.announce === 1,
    restrict: row.restrict === 1,
    ephemeral: row.ephemeral,
    creation: row.creation,
    inviteCode: row.invite_code,
  };
}

function toResource(jid: string, fields: GroupFields): GroupResource {
  return {
    id: jid,
    jid,
    subject: fields.subject,
    desc: fields.description,
    description: fields.description,
    owner: fields.owner,
    size: fields.participants.length,
    isCommunity: fields.isCommunity,
    linkedParentJid: fields.linkedParentJid,
    participants: fields.participants,
    announce: fields.announce,
    restrict: fields.restrict,
    ephemeral: fields.ephemeral,
    creation: fields.creation,
    inviteCode: fields.inviteCode,
  };
}

export function findGroup(sql: SqlStorage, jid: string): GroupResource | null {
  const row = sql.exec<GroupRow>("SELECT * FROM groups WHERE jid = ?", jid).toArray()[0];
  return row ? toResource(row.jid, fieldsOf(row)) : null;
}

export function listGroups(sql: SqlStorage): GroupResource[] {
  return sql
    .exec<GroupRow>("SELECT * FROM groups ORDER BY subject COLLATE NOCASE, jid")
    .toArray()
    .map((row) => toResource(row.jid, fieldsOf(row)));
}

export function deleteGroup(sql: SqlStorage, jid: string): boolean {
  return sql.exec("DELETE FROM groups WHERE jid = ?", jid).rowsWritten > 0;
}

function writeGroup(sql: SqlStorage, jid: string, fields: GroupFields, now: number): void {
  sql.exec(
    `INSERT OR REPLACE INTO groups (jid, subject, description, owner, creation, announce, restrict, ephemeral,
       is_community, linked_parent_jid, participants, invite_code, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    jid,
    fields.subject,
    fields.description,
    fields.owner,
    fields.creation,
    fields.announce ? 1 : 0,
    fields.restrict ? 1 : 0,
    fields.ephemeral,
    fields.isCommunity ? 1 : 0,
    fields.linkedParentJid,
    JSON.stringify(fields.participants),
    fields.inviteCode,
    now,
  );
}

const EMPTY: GroupFields = {
  subject: "",
  description: null,
  owner: null,
  isCommunity: false,
  linkedParentJid: null,
  participants: [],
  announce: false,
  restrict: false,
  ephemeral: 0,
  creation: null,
  inviteCode: null,
};

export type GroupPatch = Partial<GroupInfo> & { jid: string; inviteCode?: string | null };

/** `patch` applied over `before`: only what the patch states; an empty description means none. */
function patched(before: GroupFields, patch: GroupPatch): GroupFields {
  const after = { ...before };
  if (patch.subject !== undefined) after.subject = patch.subject;
  if (patch.description !== undefined) after.description = patch.description || null;
  if (patch.owner !== undefined) after.owner = patch.owner;
  if (patch.creation !== undefined) after.creation = patch.creation;
  if (patch.announce !== undefined) after.announce = patch.announce;
  if (patch.restrict !== undefined) after.restrict = patch.restrict;
  if (patch.ephemeral !== undefined) after.ephemeral = patch.ephemeral;
  if (patch.isCommunity !== undefined) after.isCommunity = patch.isCommunity;
  if (patch.linkedParentJid !== undefined) after.linkedParentJid = patch.linkedParentJid;
  if (patch.participants !== undefined) after.participants = patch.participants;
  if (patch.inviteCode !== undefined) after.inviteCode = patch.inviteCode;
  return after;
}

/** Members compare as a set: WhatsApp does not promise an order between two fetches. */
function comparable(key: keyof GroupFields, value: GroupFields[keyof GroupFields]): string {
  if (key !== "participants" || !Array.isArray(value)) return JSON.stringify(value);
  return JSON.stringify([...value].sort((a, b) => a.id.localeCompare(b.id)));
}

function changesBetween(before: GroupFields, after: GroupFields): Partial<GroupFields> {
  const changes: Partial<GroupFields> = {};
  for (const key of Object.keys(after) as (keyof GroupFields)[]) {
    if (comparable(key, before[key]) !== comparable(key, after[key]))
      Object.assign(changes, { [key]: after[key] });
  }
  return changes;
}

/**
 * Stores what is known about a group. A group not seen before emits `group.upsert` (full group), a
 * known one `group.update` with just what changed. An `update` about a group we never stored has too
 * little to store (no subject, no members): it is passed on as `group.update` and the next fetch
 * stores the whole group.
 */
export function mergeGroup(ctx: SessionContext, patch: GroupPatch, mode: "upsert" | "update"): void {
  const row = ctx.sql.exec<GroupRow>("SELECT * FROM groups WHERE jid = ?", patch.jid).toArray()[0];
  if (!row) {
    const after = patched(EMPTY, patch);
    if (mode === "update") {
      const stated = Object.entries(after).filter(
        ([key]) => (patch as Record<string, unknown>)[key] !== undefined,
      );
      ctx.emit("group.update", { jid: patch.jid, ...Object.fromEntries(stated) });
      return;
    }
    writeGroup(ctx.sql, patch.jid, after, ctx.now());
    ctx.emit("group.upsert", toResource(patch.jid, after));
    return;
  }
  const before = fieldsOf(row);
  const after = patched(before, patch);
  const changes = changesBetween(before, after);
  if (Object.keys(changes).length === 0) return;
  writeGroup(ctx.sql, patch.jid, after, ctx.now());
  // The invite code is ours to remember, not group information other members see change.
  const { inviteCode: _inviteCode, ...visible } = changes;
  if (Object.keys(visible).length > 0) ctx.emit("group.update", { jid: patch.jid, ...visible });
}

/** The account's own JID (without a device suffix), from the session's lifecycle record. */
export function ownJid(sql: SqlStorage): string | null {
  const row = sql.exec<{ me: string | null }>("SELECT me FROM session WHERE k = 1").toArray()[0];
  if (!row?.me) return null;
  const id = (JSON.parse(row.me) as { id?: unknown }).id;
  return typeof id === "string" ? id.replace(/:\d+@/, "@") : null;
}

const KNOWN_ACTIONS = ["add", "remove", "promote", "demote"] as const;
type KnownAction = (typeof KNOWN_ACTIONS)[number];
const isKnown = (action: string): action is KnownAction =>
  (KNOWN_ACTIONS as readonly string[]).includes(action);

/** The member list after `action`, and who it actually changed. */
function applyAction(
  members: Participant[],
  action: KnownAction,
  jids: readonly string[],
): { members: Participant[]; changed: string[] } {
  const byId = new Map(members.map((member) => [member.id, member]));
  const changed: string[] = [];
  for (const jid of jids) {
    const current = byId.get(jid);
    if (action === "add" && !current) byId.set(jid, { id: jid, admin: null });
    else if (action === "remove" && current) byId.delete(jid);
    else if (action === "promote" && current && current.admin === null)
      byId.set(jid, { id: jid, admin: "admin" });
    else if (action === "demote" && current && current.admin !== null)
      byId.set(jid, { id: jid, admin: null });
    else continue;
    changed.push(jid);
  }
  return { members: [...byId.values()], changed };
}

/**
 * Applies a membership change and emits `group.participant` with the members it changed. When the
 * account itself is removed (or left), the group is dropped from the store. A change to a group we
 * do not hold, or an action we do not model, is passed on as reported.
 */
export function changeParticipants(
  ctx: SessionContext,
  change: { jid: string; action: string; participants: string[]; author?: string },
): void {
  const announce = (participants: string[]) =>
    ctx.emit("group.participant", {
      jid: change.jid,
      action: change.action,
      participants,
      author: change.author ?? null,
    });
  const group = findGroup(ctx.sql, change.jid);
  if (!group || !isKnown(change.action)) {
    announce(change.participants);
    return;
  }
  const { members, changed } = applyAction(group.participants, change.action, change.participants);
  if (changed.length === 0) return;
  const me = ownJid(ctx.sql);
  if (change.action === "remove" && me !== null && changed.includes(me)) deleteGroup(ctx.sql, change.jid);
  else writeGroup(ctx.sql, change.jid, { ...group, participants: members }, ctx.now());
  announce(changed);
}

type GroupsEvent = Extract<NetworkEvent, { kind: "groups" }>;
type ParticipantsEvent = Extract<NetworkEvent, { kind: "group.participants" }>;

export function applyGroupsEvent(ctx: SessionContext, event: GroupsEvent): void {
  for (const group of event.groups) mergeGroup(ctx, group, event.action);
}

export function applyParticipantsEvent(ctx: SessionContext, event: ParticipantsEvent): void {
  changeParticipants(ctx, event);
}
