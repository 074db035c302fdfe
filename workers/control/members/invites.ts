import { and, desc, eq, gt, isNull, type SQL, sql } from "drizzle-orm";
import { randomBytes, sha256Hex, toBase62 } from "../../auth/crypto";
import { normaliseEmail } from "../../auth/user-store";
import type { ActorRef } from "../../core/actor";
import type { Db } from "../../db/client";
import { iso, newId } from "../../db/client";
import {
  activityLog,
  type CompanyRow,
  companies,
  companyMemberships,
  type MemberInviteRow,
  type MembershipRole,
  memberInvites,
} from "../../db/schema";
import { conflict, forbidden, gone, notFound } from "../../http/errors";
import { servingRunners } from "../runners";
import { activityInsert } from "../shared";

/**
 * Links that let a person join a company: `swm_` + 43 base62 characters (32 random bytes), shown once;
 * only the SHA-256 is stored. Agent onboarding tokens (`swi_`, ../invites) are another thing.
 */
export const MEMBER_INVITE_PREFIX = "swm_";

export type InviteState = "pending" | "used" | "revoked" | "expired";

export function inviteState(row: MemberInviteRow, now = Date.now()): InviteState {
  if (row.usedAt !== null) return "used";
  if (row.revokedAt !== null) return "revoked";
  return row.expiresAt <= now ? "expired" : "pending";
}

export const inviteResource = (row: MemberInviteRow, now = Date.now()) => ({
  id: row.id,
  role: row.role,
  email: row.email,
  note: row.note,
  state: inviteState(row, now),
  expiresAt: iso(row.expiresAt),
  createdAt: iso(row.createdAt),
  createdByUserId: row.createdByUserId,
  usedAt: row.usedAt === null ? null : iso(row.usedAt),
  usedByUserId: row.usedByUserId,
  revokedAt: row.revokedAt === null ? null : iso(row.revokedAt),
});

export interface InviteTerms {
  role: MembershipRole;
  expiresInHours: number;
  email?: string;
  note?: string;
}

export async function createInvite(
  db: Db,
  actor: ActorRef & { type: "board" },
  companyId: string,
  terms: InviteTerms,
): Promise<{ row: MemberInviteRow; token: string }> {
  const { role, expiresInHours } = terms;
  const token = `${MEMBER_INVITE_PREFIX}${toBase62(randomBytes(32), 43)}`;
  const now = Date.now();
  const row: MemberInviteRow = {
    id: newId(),
    companyId,
    tokenHash: await sha256Hex(token),
    role,
    email: terms.email === undefined ? null : normaliseEmail(terms.email),
    note: terms.note ?? null,
    expiresAt: now + expiresInHours * 3_600_000,
    usedAt: null,
    usedByUserId: null,
    revokedAt: null,
    createdByUserId: actor.userId,
    createdAt: now,
  };
  await db.batch([
    db.insert(memberInvites).values(row),
    activityInsert(
      db,
      {
        companyId,
        actor,
        action: "member_invite.created",
        entityType: "member_invite",
        entityId: row.id,
        details: { role, expiresAt: iso(row.expiresAt), ...(row.email ? { email: row.email } : {}) },
      },
      now,
    ),
  ]);
  return { row, token };
}

export const listInvites = (db: Db, companyId: string) =>
  db
    .select()
    .from(memberInvites)
    .where(eq(memberInvites.companyId, companyId))
    .orderBy(desc(memberInvites.createdAt))
    .limit(200);

/** Revokes a pending invite; a used one answers 409, an already revoked one is returned as it is. */
export async function revokeInvite(
  db: Db,
  actor: ActorRef,
  companyId: string,
  inviteId: string,
): Promise<MemberInviteRow> {
  const scoped = and(eq(memberInvites.id, inviteId), eq(memberInvites.companyId, companyId)) as SQL;
  const row = await db.select().from(memberInvites).where(scoped).get();
  if (!row) throw notFound("Invite not found");
  if (row.revokedAt !== null) return row;
  const now = Date.now();
  const [[revoked]] = await db.batch([
    db
      .update(memberInvites)
      .set({ revokedAt: now })
      .where(and(scoped, isNull(memberInvites.usedAt)))
      .returning(),
    activityInsert(
      db,
      {
        companyId,
        actor,
        action: "member_invite.revoked",
        entityType: "member_invite",
        entityId: inviteId,
        details: { role: row.role },
      },
      now,
    ),
  ]);
  if (!revoked) throw conflict("The invite was already used; remove the member instead");
  return revoked;
}

/**
 * What the invite page shows before joining: the company and role, whether the link still works, and
 * the runners that run the company's agents (whose machines, by name and owner). Joining never adds
 * the joiner's runners: they serve the company only once attached to it.
 */
export async function previewInvite(db: Db, token: string) {
  const found = await db
    .select({ invite: memberInvites, companyName: companies.name })
    .from(memberInvites)
    .innerJoin(companies, eq(companies.id, memberInvites.companyId))
    .where(eq(memberInvites.tokenHash, await sha256Hex(token)))
    .get();
  if (!found) throw notFound("Invite not found: check the link");
  const { invite, companyName } = found;
  return {
    companyId: invite.companyId,
    companyName,
    role: invite.role,
    email: invite.email,
    note: invite.note,
    state: inviteState(invite),
    expiresAt: iso(invite.expiresAt),
    runners: await servingRunners(db, invite.companyId),
  };
}

export type Acceptance =
  | { kind: "joined"; company: CompanyRow; role: MembershipRole }
  | { kind: "already_member"; company: CompanyRow };

/** An invite bound to an e-mail is for that account only; the answer names the address it is for. */
export function refuseOtherEmail(row: MemberInviteRow, email: string): void {
  if (row.email !== null && row.email !== normaliseEmail(email))
    throw forbidden(`This invite is for ${row.email}: sign in with that account, or ask for a new link`);
}

/**
 * Joins the signed-in user with the invite's role, once. The activity row, the invite's `used_at`
 * and the membership are written in one batch, each guarded by the invite still being usable (the
 * membership by it now being used by this user): D1 runs batches one at a time, so of two racing
 * accepts exactly one joins and the other finds the invite used. Someone already a member is told so
 * and the invite stays usable.
 */
export async function acceptInvite(
  db: Db,
  user: { id: string; email: string },
  token: string,
): Promise<Acceptance> {
  const userId = user.id;
  const hash = await sha256Hex(token);
  const row = await db.select().from(memberInvites).where(eq(memberInvites.tokenHash, hash)).get();
  if (!row) throw notFound("Invite not found: check the link");
  const company = await db.select().from(companies).where(eq(companies.id, row.companyId)).get();
  if (!company) throw notFound("Invite not found: check the link");
  refuseUnusable(inviteState(row));
  refuseOtherEmail(row, user.email);
  const existing = await db
    .select({ role: companyMemberships.role })
    .from(companyMemberships)
    .where(and(eq(companyMemberships.companyId, row.companyId), eq(companyMemberships.userId, userId)))
    .get();
  if (existing) return { kind: "already_member", company };
  const now = Date.now();
  const usable = and(
    eq(memberInvites.id, row.id),
    isNull(memberInvites.usedAt),
    isNull(memberInvites.revokedAt),
    gt(memberInvites.expiresAt, now),
  ) as SQL;
  const [, won] = await db.batch([
    memberJoinedActivity(db, userId, now, usable),
    db
      .update(memberInvites)
      .set({ usedAt: now, usedByUserId: userId })
      .where(usable)
      .returning({ role: memberInvites.role }),
    db
      .insert(companyMemberships)
      .select(
        db
          .select({
            companyId: memberInvites.companyId,
            userId: sql<string>`${userId}`.as("user_id"),
            role: memberInvites.role,
            createdAt: sql<number>`${now}`.as("created_at"),
          })
          .from(memberInvites)
          .where(
            and(
              eq(memberInvites.id, row.id),
              eq(memberInvites.usedByUserId, userId),
              eq(memberInvites.usedAt, now),
            ),
          ),
      )
      .onConflictDoNothing(),
  ]);
  const joined = won[0];
  if (!joined) {
    const after = await db.select().from(memberInvites).where(eq(memberInvites.id, row.id)).get();
    refuseUnusable(after ? inviteState(after) : "revoked");
    throw conflict("The invite could not be used; ask for a new link");
  }
  return { kind: "joined", company, role: joined.role };
}

export function refuseUnusable(state: InviteState): void {
  if (state === "used") throw conflict("This invite link was already used; ask for a new one", { state });
  if (state === "expired") throw gone("This invite link has expired; ask for a new one", { state });
  if (state === "revoked") throw gone("This invite link was revoked; ask for a new one", { state });
}

/**
 * The `member.joined` activity row, selected from the invite the same batch consumes (`invite`: the
 * guard that picks it while still usable), so it exists exactly when the join does. `signedUp`: the
 * person created their account with the invite.
 */
export function memberJoinedActivity(db: Db, userId: string, now: number, invite: SQL, signedUp = false) {
  const details = signedUp
    ? sql<string>`json_object('role', ${memberInvites.role}, 'inviteId', ${memberInvites.id}, 'signedUp', json('true'))`
    : sql<string>`json_object('role', ${memberInvites.role}, 'inviteId', ${memberInvites.id})`;
  return db.insert(activityLog).select(
    db
      .select({
        // Numbered by the log (AUTOINCREMENT): drizzle's insert-select lists every column.
        seq: sql<null>`NULL`.as("seq"),
        id: sql<string>`${newId()}`.as("id"),
        companyId: memberInvites.companyId,
        actorType: sql<"user">`'user'`.as("actor_type"),
        actorId: sql<string>`${userId}`.as("actor_id"),
        action: sql<string>`'member.joined'`.as("action"),
        entityType: sql<string>`'member'`.as("entity_type"),
        entityId: sql<string>`${userId}`.as("entity_id"),
        details: details.as("details"),
        createdAt: sql<number>`${now}`.as("created_at"),
      })
      .from(memberInvites)
      .where(invite),
  );
}
