import { and, eq, gt, isNull, sql } from "drizzle-orm";
import { randomBytes, sha256Hex, toBase62 } from "../../auth/crypto";
import type { Actor } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import {
  activityLog,
  agents,
  type CompanyRow,
  companies,
  companyMemberships,
  inviteTokens,
} from "../../db/schema";
import { forbidden } from "../../http/errors";
import { requireOwnerAuthority } from "../shared";

/**
 * Invite tokens for external agents: `swi_` + 43 base62 characters (32 random bytes), shown once;
 * only the SHA-256 is stored. A token is the credential of GET /llms/onboarding/<token>.txt and
 * works once, before it expires.
 */
export const INVITE_PREFIX = "swi_";
export const INVITE_DEFAULT_MINUTES = 60;
export const INVITE_MAX_MINUTES = 24 * 60;

export async function newInviteToken(): Promise<{ token: string; hash: string }> {
  const token = `${INVITE_PREFIX}${toBase62(randomBytes(32), 43)}`;
  return { token, hash: await sha256Hex(token) };
}

/**
 * "Invite permission" (spec): a board user who owns the company (memberships are owner or member;
 * there is no admin role), or the company's CEO agent. The caller has already been checked to see
 * the company, so a refusal here is a 403.
 */
export async function assertMayInvite(db: Db, actor: Actor, companyId: string): Promise<void> {
  if (actor.type === "agent") {
    const agent = await db
      .select({ role: agents.role })
      .from(agents)
      .where(eq(agents.id, actor.agentId))
      .get();
    if (agent?.role === "ceo") return requireOwnerAuthority(db, actor, companyId, "invite external agents");
    throw forbidden("Only the company's owners and its CEO agent may invite external agents");
  }
  const membership = await db
    .select({ role: companyMemberships.role })
    .from(companyMemberships)
    .where(and(eq(companyMemberships.companyId, companyId), eq(companyMemberships.userId, actor.userId)))
    .get();
  if (membership?.role !== "owner")
    throw forbidden("Only the company's owners and its CEO agent may invite external agents");
}

export type Redemption =
  | { kind: "redeemed"; company: CompanyRow }
  | { kind: "unknown" }
  | { kind: "used" }
  | { kind: "expired" };

const redeemable = (hash: string, now: number) =>
  and(eq(inviteTokens.tokenHash, hash), isNull(inviteTokens.usedAt), gt(inviteTokens.expiresAt, now));

/**
 * Marks the token used, once. The activity row is inserted from the same condition just before the
 * conditional UPDATE, in one batch: both see the same row, so exactly one of two racing redemptions
 * records and wins, and a refused one writes nothing.
 */
export async function redeemInvite(db: Db, token: string, now: number): Promise<Redemption> {
  const hash = await sha256Hex(token);
  const [, won] = await db.batch([
    db.insert(activityLog).select(
      db
        .select({
          // Numbered by the log (AUTOINCREMENT): drizzle's insert-select lists every column.
          seq: sql<null>`NULL`.as("seq"),
          id: sql<string>`${newId()}`.as("id"),
          companyId: inviteTokens.companyId,
          actorType: sql<"system">`'system'`.as("actor_type"),
          actorId: inviteTokens.id,
          action: sql<string>`'invite.redeemed'`.as("action"),
          entityType: sql<string>`'invite'`.as("entity_type"),
          entityId: inviteTokens.id,
          details: sql<string>`'{}'`.as("details"),
          createdAt: sql<number>`${now}`.as("created_at"),
        })
        .from(inviteTokens)
        .where(redeemable(hash, now)),
    ),
    db
      .update(inviteTokens)
      .set({ usedAt: now })
      .where(redeemable(hash, now))
      .returning({ companyId: inviteTokens.companyId }),
  ]);
  const companyId = won[0]?.companyId;
  if (companyId) {
    const company = await db.select().from(companies).where(eq(companies.id, companyId)).get();
    return company ? { kind: "redeemed", company } : { kind: "unknown" };
  }
  const row = await db
    .select({ usedAt: inviteTokens.usedAt })
    .from(inviteTokens)
    .where(eq(inviteTokens.tokenHash, hash))
    .get();
  if (!row) return { kind: "unknown" };
  return row.usedAt !== null ? { kind: "used" } : { kind: "expired" };
}
