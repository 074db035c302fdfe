import { and, asc, eq, isNull, ne, or, type SQL, sql } from "drizzle-orm";
import { type ActorRef, activityActor } from "../../core/actor";
import type { Db } from "../../db/client";
import { iso, newId } from "../../db/client";
import {
  type ActorType,
  activityLog,
  agentApiKeys,
  companyMemberships,
  lineMembers,
  type MembershipRole,
  users,
} from "../../db/schema";
import { conflict, notFound } from "../../http/errors";
import { type ActivityEntry, forgetMember } from "../shared";
import type { AgentKeyChoice } from "./schemas";

export interface Member {
  userId: string;
  name: string;
  email: string;
  role: MembershipRole;
  joinedAt: string;
}

const memberColumns = {
  userId: companyMemberships.userId,
  name: users.name,
  email: users.email,
  role: companyMemberships.role,
  createdAt: companyMemberships.createdAt,
};

const toMember = (row: {
  userId: string;
  name: string;
  email: string;
  role: MembershipRole;
  createdAt: number;
}) => ({
  userId: row.userId,
  name: row.name,
  email: row.email,
  role: row.role,
  joinedAt: iso(row.createdAt),
});

const ROLE_ORDER = sql`CASE ${companyMemberships.role} WHEN 'owner' THEN 0 WHEN 'member' THEN 1 ELSE 2 END`;

/** Owners first, then members, then viewers; each by when they joined. */
export async function listMembers(db: Db, companyId: string): Promise<Member[]> {
  const rows = await db
    .select(memberColumns)
    .from(companyMemberships)
    .innerJoin(users, eq(users.id, companyMemberships.userId))
    .where(eq(companyMemberships.companyId, companyId))
    .orderBy(ROLE_ORDER, asc(companyMemberships.createdAt));
  return rows.map(toMember);
}

export async function findMember(db: Db, companyId: string, userId: string): Promise<Member | null> {
  const row = await db
    .select(memberColumns)
    .from(companyMemberships)
    .innerJoin(users, eq(users.id, companyMemberships.userId))
    .where(and(eq(companyMemberships.companyId, companyId), eq(companyMemberships.userId, userId)))
    .get();
  return row ? toMember(row) : null;
}

const membershipOf = (companyId: string, userId: string) =>
  and(eq(companyMemberships.companyId, companyId), eq(companyMemberships.userId, userId)) as SQL;

/**
 * True when the company keeps an owner after `userId` stops being one. Evaluated inside the
 * statement that changes the row, so two owners demoting or removing each other at once cannot both
 * succeed: D1 runs statements one at a time, and the second sees the first's change.
 */
const anotherOwnerRemains = (companyId: string, userId: string) =>
  sql`EXISTS (SELECT 1 FROM ${companyMemberships} AS other WHERE other.company_id = ${companyId} AND other.user_id <> ${userId} AND other.role = 'owner')`;

/** The member's row, where changing or removing it still leaves the company an owner. */
const membershipKeepingAnOwner = (companyId: string, userId: string) =>
  and(
    membershipOf(companyId, userId),
    or(ne(companyMemberships.role, "owner"), anotherOwnerRemains(companyId, userId)),
  ) as SQL;

const LAST_OWNER = "A company keeps at least one owner: make someone else an owner first";

/** Role change; refuses (409) to take the last owner's ownership away. */
export async function changeRole(
  db: Db,
  actor: ActorRef,
  companyId: string,
  target: Member,
  role: MembershipRole,
): Promise<Member> {
  if (target.role === role) return target;
  const now = Date.now();
  const allowed = membershipKeepingAnOwner(companyId, target.userId);
  const entry = {
    companyId,
    actor,
    action: "member.role_changed",
    entityType: "member",
    entityId: target.userId,
    details: { from: target.role, to: role },
  };
  const [, changed] = await db.batch([
    activityWhere(db, entry, allowed, now),
    db
      .update(companyMemberships)
      .set({ role })
      .where(allowed)
      .returning({ userId: companyMemberships.userId }),
  ]);
  if (changed.length === 0) throw conflict(LAST_OWNER);
  forgetMember(target.userId, companyId);
  return { ...target, role };
}

/** The live agent keys `userId` minted in the company. */
const keysMintedBy = (companyId: string, userId: string) =>
  and(
    eq(agentApiKeys.companyId, companyId),
    eq(agentApiKeys.createdByUserId, userId),
    isNull(agentApiKeys.revokedAt),
  ) as SQL;

/**
 * Removal by an owner, or leaving (`actor` is the member); refuses (409) to remove the last owner.
 * The agent keys the member minted in the company go with the membership, in the same batch and
 * under the same condition: revoked, or re-owned by the removing owner (`transfer`); so does their
 * number on the company's line. The caller
 * invalidates the returned agents' keys in the Keyring.
 */
export async function removeMember(
  db: Db,
  actor: ActorRef,
  companyId: string,
  target: Member,
  agentKeys: AgentKeyChoice,
): Promise<{ agentIds: string[] }> {
  const now = Date.now();
  const leaving = actor.type === "board" && actor.userId === target.userId;
  const allowed = membershipKeepingAnOwner(companyId, target.userId);
  const minted = keysMintedBy(companyId, target.userId);
  const keys = await db
    .select({ id: agentApiKeys.id, agentId: agentApiKeys.agentId })
    .from(agentApiKeys)
    .where(minted);
  const entry = {
    companyId,
    actor,
    action: leaving ? "member.left" : "member.removed",
    entityType: "member",
    entityId: target.userId,
    details: {
      role: target.role,
      email: target.email,
      agentKeys: { mode: agentKeys, keyIds: keys.map((key) => key.id) },
    },
  };
  const change =
    agentKeys === "transfer" && actor.type === "board"
      ? { createdByUserId: actor.userId }
      : { revokedAt: now };
  const membershipGoes = sql`EXISTS (SELECT 1 FROM ${companyMemberships} WHERE ${allowed})`;
  const [, , , removed] = await db.batch([
    activityWhere(db, entry, allowed, now),
    db.update(agentApiKeys).set(change).where(and(minted, membershipGoes)),
    // Their number on the company's line goes too: nothing more is sent to it (issue 28).
    db
      .delete(lineMembers)
      .where(
        and(eq(lineMembers.companyId, companyId), eq(lineMembers.userId, target.userId), membershipGoes),
      ),
    db.delete(companyMemberships).where(allowed).returning({ userId: companyMemberships.userId }),
  ]);
  if (removed.length === 0) throw conflict(LAST_OWNER);
  forgetMember(target.userId, companyId);
  return { agentIds: [...new Set(keys.map((key) => key.agentId))] };
}

/**
 * The activity row of a guarded membership change, inserted only where `condition` holds over
 * company_memberships. It runs just before the change in the same batch, so both see the same rows:
 * a refused change records nothing, and of two racing changes only the one that happens is logged.
 */
function activityWhere(db: Db, entry: ActivityEntry, condition: SQL, now: number) {
  const who = activityActor(entry.actor);
  return db.insert(activityLog).select(
    db
      .select({
        // Numbered by the log (AUTOINCREMENT): drizzle's insert-select lists every column.
        seq: sql<null>`NULL`.as("seq"),
        id: sql<string>`${newId()}`.as("id"),
        companyId: sql<string>`${entry.companyId}`.as("company_id"),
        actorType: sql<ActorType>`${who.actorType}`.as("actor_type"),
        actorId: sql<string>`${who.actorId}`.as("actor_id"),
        action: sql<string>`${entry.action}`.as("action"),
        entityType: sql<string>`${entry.entityType}`.as("entity_type"),
        entityId: sql<string>`${entry.entityId}`.as("entity_id"),
        details: sql<string>`${JSON.stringify(entry.details ?? {})}`.as("details"),
        createdAt: sql<number>`${now}`.as("created_at"),
      })
      .from(companyMemberships)
      .where(condition),
  );
}

export function memberOrNotFound(member: Member | null): Member {
  if (!member) throw notFound("Member not found");
  return member;
}
