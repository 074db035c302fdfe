import { and, eq } from "drizzle-orm";
import type { Context } from "hono";
import type { Actor, BoardActor } from "../../core/actor";
import type { AppEnv } from "../../core/env";
import type { Db } from "../../db/client";
import { database } from "../../db/client";
import { type CompanyRow, companies, companyMemberships } from "../../db/schema";
import { forbidden, notFound } from "../../http/errors";
import { recentlyConfirmedMember, rememberMember } from "./memberships";
import { membershipRole, refuseViewerWrites } from "./roles";

/** The caller and a D1 handle: what every control-plane handler starts from. */
export function controlContext(c: Context<AppEnv>): { actor: Actor; db: Db } {
  return { actor: c.get("actor"), db: database(c.env.DB) };
}

/** A board user's key limited to another company (core/scopes.ts): that one answers as unknown. */
const outsideKeyLimit = (actor: BoardActor, companyId: string): boolean =>
  actor.onlyCompanyId !== undefined && actor.onlyCompanyId !== companyId;

/**
 * Whether the actor may see `companyId` at all. Agents see exactly their own company; board users the
 * companies they are members of (a "yes" is remembered briefly for reads: see memberships.ts). A
 * viewer's write is refused here (403), since it can see the company: a write always asks D1.
 */
export async function canAccessCompany(db: Db, actor: Actor, companyId: string): Promise<boolean> {
  if (actor.type === "agent") return actor.companyId === companyId;
  if (outsideKeyLimit(actor, companyId)) return false;
  if (actor.confirmedMemberOf === companyId) return true;
  if (!actor.mutating && recentlyConfirmedMember(actor.userId, companyId)) return true;
  const role = await membershipRole(db, actor.userId, companyId);
  if (role === null) return false;
  refuseViewerWrites(actor, role);
  rememberMember(actor.userId, companyId);
  return true;
}

/**
 * The company, if the actor may see it; otherwise the same 404 an unknown id gets, so ids of other
 * tenants cannot be probed.
 */
export async function companyForActor(db: Db, actor: Actor, companyId: string): Promise<CompanyRow> {
  if (actor.type === "agent" && actor.companyId !== companyId) throw notFound("Company not found");
  if (actor.type === "board" && outsideKeyLimit(actor, companyId)) throw notFound("Company not found");
  const row =
    actor.type === "agent"
      ? await db.select().from(companies).where(eq(companies.id, companyId)).get()
      : await db
          .select({ company: companies, role: companyMemberships.role })
          .from(companies)
          .innerJoin(
            companyMemberships,
            and(eq(companyMemberships.companyId, companies.id), eq(companyMemberships.userId, actor.userId)),
          )
          .where(eq(companies.id, companyId))
          .get()
          .then((joined) => {
            if (joined) refuseViewerWrites(actor, joined.role);
            return joined?.company;
          });
  if (!row) throw notFound("Company not found");
  return row;
}

/**
 * For entities fetched by their own id (`/issues/:id`, `/agents/:id`, …): a row of a company the
 * actor cannot see answers exactly like a missing row.
 */
export async function ensureVisible<T extends { companyId: string }>(
  db: Db,
  actor: Actor,
  row: T | undefined,
  what: string,
): Promise<T> {
  if (!row || !(await canAccessCompany(db, actor, row.companyId))) throw notFound(`${what} not found`);
  return row;
}

/** Board-only operations (document delete, company status and budget, …). */
export function requireBoard(actor: Actor, what: string): asserts actor is Extract<Actor, { type: "board" }> {
  if (actor.type !== "board") throw forbidden(`Only board users may ${what}`);
}
