import { and, eq, gt, isNull, type SQL, sql } from "drizzle-orm";
import { sha256Hex } from "../../auth/crypto";
import { hashPassword } from "../../auth/passwords";
import { findUserByEmail, normaliseEmail } from "../../auth/user-store";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import {
  type CompanyRow,
  companies,
  companyMemberships,
  type MemberInviteRow,
  type MembershipRole,
  memberInvites,
  users,
} from "../../db/schema";
import { badRequest, conflict, forbidden, isUniqueViolation, notFound } from "../../http/errors";
import { inviteState, memberJoinedActivity, refuseUnusable } from "./invites";

/** Every account made by sign-up: instance-wide it may do what any non-SUPERADMIN may (docs/decisions.md). */
export const SIGNUP_ACCOUNT_ROLE = "STAFF" as const;

export interface SignupInput {
  name: string;
  password: string;
  email?: string;
}

export interface SignedUp {
  user: { id: string; name: string; email: string; role: typeof SIGNUP_ACCOUNT_ROLE };
  company: CompanyRow;
  role: MembershipRole;
}

const alreadyRegistered = (email: string) =>
  conflict(
    `An account with ${email} already exists: sign in with it, then open the invite link again to join`,
    { reason: "account_exists" },
  );

/**
 * Only an invite bound to an e-mail creates accounts: opening the link is what proves the address, and
 * the only e-mail anyone can try is the one the link already shows, so an "already registered" answer
 * reveals nothing the invite does not.
 */
async function signupInvite(
  db: Db,
  token: string,
  input: SignupInput,
): Promise<{ invite: MemberInviteRow; company: CompanyRow; email: string }> {
  const found = await db
    .select({ invite: memberInvites, company: companies })
    .from(memberInvites)
    .innerJoin(companies, eq(companies.id, memberInvites.companyId))
    .where(eq(memberInvites.tokenHash, await sha256Hex(token)))
    .get();
  if (!found) throw notFound("Invite not found: check the link");
  const { invite, company } = found;
  refuseUnusable(inviteState(invite));
  const email = invite.email;
  if (email === null)
    throw forbidden(
      "This invite link is for people who already have an account: sign in, then open it again. " +
        "To bring someone new, an owner creates an invite for their e-mail.",
    );
  if (input.email !== undefined && normaliseEmail(input.email) !== email)
    throw badRequest(`This invite is for ${email}; the account is created with that e-mail`, [
      { path: ["email"], message: `Must be ${email}` },
    ]);
  if (await findUserByEmail(db, email)) throw alreadyRegistered(email);
  return { invite, company, email };
}

/**
 * Creates the account (STAFF), marks the invite used and adds the membership in one D1 batch, each
 * statement guarded by the invite still being usable: batches run one at a time, so of two racing
 * sign-ups exactly one account is made and joins, and the other finds the invite used. An account
 * registered with the same e-mail meanwhile fails the batch on the unique e-mail, which rolls it back.
 */
export async function signUpWithInvite(db: Db, token: string, input: SignupInput): Promise<SignedUp> {
  const { invite, company, email } = await signupInvite(db, token, input);
  const userId = newId();
  const passwordHash = await hashPassword(input.password);
  const now = Date.now();
  const usable = and(
    eq(memberInvites.id, invite.id),
    isNull(memberInvites.usedAt),
    isNull(memberInvites.revokedAt),
    gt(memberInvites.expiresAt, now),
  ) as SQL;
  const usedByNewcomer = and(
    eq(memberInvites.id, invite.id),
    eq(memberInvites.usedByUserId, userId),
    eq(memberInvites.usedAt, now),
  ) as SQL;
  let won: Array<{ role: MembershipRole }>;
  try {
    [, won] = await db.batch([
      db.insert(users).select(
        db
          .select({
            id: sql<string>`${userId}`.as("id"),
            email: sql<string>`${email}`.as("email"),
            name: sql<string>`${input.name}`.as("name"),
            image: sql<null>`NULL`.as("image"),
            role: sql<typeof SIGNUP_ACCOUNT_ROLE>`${SIGNUP_ACCOUNT_ROLE}`.as("role"),
            passwordHash: sql<string>`${passwordHash}`.as("password_hash"),
            createdAt: sql<number>`${now}`.as("created_at"),
            updatedAt: sql<number>`${now}`.as("updated_at"),
          })
          .from(memberInvites)
          .where(usable),
      ),
      db
        .update(memberInvites)
        .set({ usedAt: now, usedByUserId: userId })
        .where(usable)
        .returning({ role: memberInvites.role }),
      db.insert(companyMemberships).select(
        db
          .select({
            companyId: memberInvites.companyId,
            userId: sql<string>`${userId}`.as("user_id"),
            role: memberInvites.role,
            createdAt: sql<number>`${now}`.as("created_at"),
          })
          .from(memberInvites)
          .where(usedByNewcomer),
      ),
      memberJoinedActivity(db, userId, now, usedByNewcomer, true),
    ]);
  } catch (error) {
    if (isUniqueViolation(error)) throw alreadyRegistered(email);
    throw error;
  }
  const joined = won[0];
  if (!joined) {
    const after = await db.select().from(memberInvites).where(eq(memberInvites.id, invite.id)).get();
    refuseUnusable(after ? inviteState(after) : "revoked");
    throw conflict("The invite could not be used; ask for a new link");
  }
  return {
    user: { id: userId, name: input.name, email, role: SIGNUP_ACCOUNT_ROLE },
    company,
    role: joined.role,
  };
}
