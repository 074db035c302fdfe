import { and, eq, inArray, or, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Context, MiddlewareHandler } from "hono";
import type { Actor, BoardActor } from "../../core/actor";
import type { AppEnv } from "../../core/env";
import type { Db } from "../../db/client";
import { database } from "../../db/client";
import {
  agentApiKeys,
  agents,
  approvals,
  companyMemberships,
  companySecrets,
  goals,
  heartbeatRuns,
  issues,
  type MembershipRole,
  projects,
  routines,
  routineTriggers,
} from "../../db/schema";
import { forbidden, notFound } from "../../http/errors";
import { apiFamilyOf } from "../../http/family";
import { knownIssueLocation } from "./issue-places";
import { recentlyConfirmedWriter, rememberWriter } from "./memberships";

/**
 * Membership roles. A viewer reads everything its company shows and changes nothing; a member changes
 * everything but the owner-only operations (company settings, members and member invites,
 * external-agent invites, runners: each route calls `requireOwner`); an owner changes all of it.
 * Agents are not members: their own rules (the CEO, managers) apply.
 */
export const VIEWER_REFUSAL = "Viewers of this company may read but not change anything";

/**
 * Writes a viewer may make: they change only the viewer's own state (read marks, leaving, their own
 * number on the line) or read
 * (an export renders the company, it changes nothing). Anything else a viewer sends that is not a
 * GET, HEAD or OPTIONS answers 403.
 */
const VIEWER_MAY: ReadonlyArray<{ method: string; path: RegExp }> = [
  { method: "POST", path: /^\/api\/issues\/[^/]+\/read$/ },
  { method: "DELETE", path: /^\/api\/companies\/[^/]+\/members\/[^/]+$/ },
  { method: "POST", path: /^\/api\/companies\/[^/]+\/exports(\/preview)?$/ },
  // A viewer's own number on the company's line (issue 28): theirs to link, verify and unlink.
  ...["PUT", "PATCH", "DELETE"].map((method) => ({
    method,
    path: /^\/api\/companies\/[^/]+\/line\/members\/me$/,
  })),
  { method: "POST", path: /^\/api\/companies\/[^/]+\/line\/members\/me\/verify$/ },
];

/** The user's role in the company, read from D1 (never from a cache: writes must see a change at once). */
export async function membershipRole(
  db: Db,
  userId: string,
  companyId: string,
): Promise<MembershipRole | null> {
  const row = await db
    .select({ role: companyMemberships.role })
    .from(companyMemberships)
    .where(and(eq(companyMemberships.companyId, companyId), eq(companyMemberships.userId, userId)))
    .get();
  return row?.role ?? null;
}

/** The check every company access makes once it knows the board user's role. */
export function refuseViewerWrites(actor: Actor, role: MembershipRole): void {
  if (actor.type === "board" && actor.mutating && role === "viewer") throw forbidden(VIEWER_REFUSAL);
}

/** Owner-only operations; agents are refused too unless the route lets them in first. */
export async function requireOwner(db: Db, actor: Actor, companyId: string, what: string): Promise<void> {
  const role = actor.type === "board" ? await membershipRole(db, actor.userId, companyId) : null;
  if (role !== "owner") throw forbidden(`Only the company's owners may ${what}`);
}

/**
 * Owner-only company edits the CEO agent may make too (branding, the logo, external-agent invites;
 * the route checks the agent is the CEO). A board user must be an owner. An agent key a person minted
 * counts only while that person is an owner: a member must not reach these edits through a CEO key
 * they hold (issue 25). Keys the platform or an agent minted pass: who may change what the CEO runs,
 * or mint it keys, is checked where that changes (control/agents: `requireOwnerToSteerCeo`).
 */
export async function requireOwnerAuthority(
  db: Db,
  actor: Actor,
  companyId: string,
  what: string,
): Promise<void> {
  if (actor.type === "board") return requireOwner(db, actor, companyId, what);
  const key = await db
    .select({ mintedBy: agentApiKeys.createdByUserId })
    .from(agentApiKeys)
    .where(eq(agentApiKeys.id, actor.keyId))
    .get();
  if (!key?.mintedBy || (await membershipRole(db, key.mintedBy, companyId)) === "owner") return;
  throw forbidden(`Only the company's owners, or its CEO agent with a key an owner minted, may ${what}`);
}

/**
 * The company a control-plane path is about, from its first two segments: `/companies/{id}` itself, or
 * the company of the resource named by `/<resource>/{id}`. Null when the path names none (a company
 * yet to be created, a user's runners, an invite link) or the row does not exist: the route answers.
 */
function companyOfPath(path: string): SQL | null {
  const named = resourceOfPath(path);
  if (named === null) return null;
  const { resource, key } = named;
  if (resource === "companies") return sql`(${key})`;
  if (resource === "issues")
    return sql`(SELECT ${issues.companyId} FROM ${issues} WHERE ${or(eq(issues.id, key.toLowerCase()), inArray(issues.identifier, [key, key.toUpperCase()]))})`;
  const table = OWNED_BY_COMPANY[resource as keyof typeof OWNED_BY_COMPANY];
  return table ? sql`(SELECT ${table.companyId} FROM ${table} WHERE ${table.id} = ${key})` : null;
}

/** `/api/<resource>/{id}/…` → the resource and its decoded id, or null (none, or a malformed escape). */
function resourceOfPath(path: string): { resource: string; key: string } | null {
  const [, , resource, id] = path.split("/");
  if (!resource || !id) return null;
  try {
    return { resource, key: decodeURIComponent(id) };
  } catch {
    return null; // A malformed escape: the route's own parameter handling answers it.
  }
}

/** The company a path is about when the path or this isolate's memory says it, without a query. */
function knownCompanyOfPath(path: string): string | undefined {
  const named = resourceOfPath(path);
  if (named?.resource === "companies") return named.key;
  if (named?.resource === "issues") return knownIssueLocation(named.key)?.companyId;
  return undefined;
}

/** `/api/<resource>/{id}/…` → the table whose row names the company. */
const OWNED_BY_COMPANY = {
  agents,
  projects,
  goals,
  routines,
  "routine-triggers": routineTriggers,
  approvals,
  secrets: companySecrets,
  "heartbeat-runs": heartbeatRuns,
} satisfies Record<string, SQLiteTable & { id: SQLiteColumn; companyId: SQLiteColumn }>;

/**
 * Refuses a viewer's write before anything else runs, body validation included, so every
 * control-plane route is covered whatever it forgets. The access checks in access.ts refuse the same
 * writes again (`actor.mutating`), for a path this cannot place.
 */
export const viewerGate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const actor = c.get("actor") as Actor | undefined;
  if (actor?.type !== "board" || !actor.mutating || apiFamilyOf(c.req.path) !== "control") return next();
  if (VIEWER_MAY.some((allowed) => allowed.method === c.req.method && allowed.path.test(c.req.path))) {
    c.set("actor", { ...actor, mutating: false });
    return next();
  }
  const company = companyOfPath(c.req.path);
  if (company === null) return next();
  if (trustRecentWriter(c, actor)) return next();
  const row = await database(c.env.DB)
    .select({ role: companyMemberships.role, companyId: companyMemberships.companyId })
    .from(companyMemberships)
    .where(
      and(eq(companyMemberships.userId, actor.userId), sql`${companyMemberships.companyId} IN ${company}`),
    )
    .get();
  if (row?.role === "viewer") throw forbidden(VIEWER_REFUSAL);
  // The route's own access check would read the same membership again (issue 31: a write's round trips).
  if (row) c.set("actor", { ...actor, confirmedMemberOf: row.companyId });
  if (row) rememberWriter(actor.userId, row.companyId);
  return next();
};

/**
 * A guarded write (auth/credential-guard.ts) by a user D1 confirmed as an owner or member of the
 * company within the last second, under `/companies/{id}` or `/issues/{id}` of an issue this isolate
 * knows the company of: the role read is spared, and the guard checks the role inside the write's
 * commit instead (its `memberOf`).
 */
function trustRecentWriter(c: Context<AppEnv>, actor: BoardActor): boolean {
  const guard = c.get("credentialGuard");
  if (guard?.kind !== "user") return false;
  const companyId = knownCompanyOfPath(c.req.path);
  if (companyId === undefined || !recentlyConfirmedWriter(actor.userId, companyId)) return false;
  c.set("credentialGuard", { ...guard, memberOf: companyId });
  c.set("actor", { ...actor, confirmedMemberOf: companyId });
  return true;
}

/**
 * A key limited to one company (core/scopes.ts) reaches no other: a path naming another company's
 * resource answers 404 before anything runs, as an unknown id would. Routes that list across companies
 * filter by the same limit, and canAccessCompany refuses it again for what a path does not place.
 */
export const keyCompanyGate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const actor = c.get("actor") as Actor | undefined;
  if (actor?.type !== "board" || actor.onlyCompanyId === undefined || apiFamilyOf(c.req.path) !== "control")
    return next();
  const company = companyOfPath(c.req.path);
  if (company === null) return next();
  const row = await database(c.env.DB).get<{ company_id: string | null }>(
    sql`SELECT ${company} AS company_id`,
  );
  if (row?.company_id != null && row.company_id !== actor.onlyCompanyId) throw notFound("Not found");
  return next();
};
