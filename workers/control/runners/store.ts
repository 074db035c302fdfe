import { and, asc, eq, inArray, isNull, type SQL, sql } from "drizzle-orm";
import { sha256Hex } from "../../auth/crypto";
import { runnerTokens } from "../../auth/prefixed-token";
import type { Db } from "../../db/client";
import { iso } from "../../db/client";
import {
  companies,
  companyMemberships,
  type RunnerRow,
  runnerCompanies,
  runners,
  users,
} from "../../db/schema";
import { forbidden, notFound } from "../../http/errors";

/**
 * A runner that has said nothing for this long counts as gone, even if its link never reported
 * closing (an edge deploy drops sockets without a close event). Runners send a heartbeat every 20 s.
 */
export const RUNNER_SILENCE_MS = 90_000;

/**
 * A run's PLATFORM_API_URL: the API's base URL, the edge's origin as the runner reached it plus
 * `/api`, as the /llms guidance spells it (`GET $PLATFORM_API_URL/agents/me`). Links opened before
 * this was the rule stored the bare origin; they get `/api` added too.
 */
export const apiBaseUrl = (originOrApiUrl: string): string => {
  const trimmed = originOrApiUrl.replace(/\/+$/, "");
  return trimmed.endsWith("/api") ? trimmed : `${trimmed}/api`;
};

/**
 * A runner serves exactly the companies listed for it in runner_companies, and each only while its
 * owner is an owner of it. `allCompanies` adds nothing here: it only makes the companies its owner
 * creates get listed as they are created (followNewCompany), so a company its owner joins by invite is
 * never served until its owner attaches the runner to it (docs/decisions.md, issue 25 H-a).
 */
const listedFor = (runnerId: SQL | string, companyId: SQL | string): SQL =>
  sql`EXISTS (SELECT 1 FROM ${runnerCompanies} WHERE ${runnerCompanies.runnerId} = ${runnerId} AND ${runnerCompanies.companyId} = ${companyId})`;

const ownedBy = (userId: SQL | string, companyId: SQL | string): SQL =>
  sql`EXISTS (SELECT 1 FROM ${companyMemberships} WHERE ${companyMemberships.companyId} = ${companyId} AND ${companyMemberships.userId} = ${userId} AND ${companyMemberships.role} = 'owner')`;

/**
 * The ids of the companies a runner serves right now, as a subquery. Evaluated at every claim, so a
 * runner stops serving a company the moment its owner stops owning it or an owner detaches it.
 */
export function coveredCompanyIds(runner: Pick<RunnerRow, "id" | "ownerUserId">): SQL {
  return sql`(SELECT ${runnerCompanies.companyId} FROM ${runnerCompanies} WHERE ${runnerCompanies.runnerId} = ${runner.id} AND ${ownedBy(runner.ownerUserId, sql`${runnerCompanies.companyId}`)})`;
}

/** A condition on `runners`: the runner serves `companyId` right now (revocation aside). */
export const servesCompany = (companyId: string): SQL =>
  sql`(${listedFor(sql`${runners.id}`, companyId)} AND ${ownedBy(sql`${runners.ownerUserId}`, companyId)})`;

/**
 * The statement that lists a company its creator just created for each of the creator's live
 * `allCompanies` runners; batched after the company's own insert.
 */
export function followNewCompany(db: Db, creatorUserId: string, companyId: string, now: number) {
  return db.insert(runnerCompanies).select(
    db
      .select({
        runnerId: runners.id,
        companyId: sql<string>`${companyId}`.as("company_id"),
        createdAt: sql<number>`${now}`.as("created_at"),
      })
      .from(runners)
      .where(
        and(
          eq(runners.ownerUserId, creatorUserId),
          eq(runners.allCompanies, true),
          isNull(runners.revokedAt),
        ),
      ),
  );
}

/** The companies `userId` created and owns now: what a runner registered with `allCompanies` serves. */
export async function createdAndOwned(db: Db, userId: string): Promise<string[]> {
  const rows = await db
    .select({ id: companies.id })
    .from(companies)
    .innerJoin(companyMemberships, eq(companyMemberships.companyId, companies.id))
    .where(
      and(
        eq(companies.createdByUserId, userId),
        eq(companyMemberships.userId, userId),
        eq(companyMemberships.role, "owner"),
      ),
    )
    .orderBy(asc(companies.createdAt));
  return rows.map((row) => row.id);
}

/**
 * The runners that serve the company right now, by name and owner, oldest first: the machines its
 * agents run on, which the invite page names before anyone joins.
 */
export async function servingRunners(db: Db, companyId: string, now = Date.now()) {
  const rows = await db
    .select({ runner: runners, ownerName: users.name })
    .from(runners)
    .innerJoin(users, eq(users.id, runners.ownerUserId))
    .where(and(isNull(runners.revokedAt), servesCompany(companyId)))
    .orderBy(asc(runners.createdAt));
  return rows.map(({ runner, ownerName }) => ({
    name: runner.name,
    ownerName,
    connected: isConnected(runner, now),
  }));
}

/** The live (not revoked) runner a presented token belongs to. */
export async function runnerForToken(db: Db, token: string): Promise<RunnerRow | undefined> {
  if (!runnerTokens.isWellFormed(token)) return undefined;
  return db
    .select()
    .from(runners)
    .where(and(eq(runners.tokenHash, await sha256Hex(token)), isNull(runners.revokedAt)))
    .get();
}

export const isConnected = (
  runner: Pick<RunnerRow, "connectedAt" | "lastSeenAt" | "revokedAt">,
  now: number,
) =>
  runner.revokedAt === null &&
  runner.connectedAt !== null &&
  runner.lastSeenAt !== null &&
  runner.lastSeenAt > now - RUNNER_SILENCE_MS;

/**
 * Of `companyIds`, those at least one connected runner serves right now. A queued run of any other
 * company waits for a runner (the API's `waitingForRunner`).
 */
export async function companiesWithConnectedRunner(
  db: Db,
  companyIds: readonly string[],
  now = Date.now(),
): Promise<Set<string>> {
  const wanted = [...new Set(companyIds)];
  if (wanted.length === 0) return new Set();
  const rows = await db
    .selectDistinct({ companyId: companyMemberships.companyId })
    .from(companyMemberships)
    .innerJoin(runners, eq(runners.ownerUserId, companyMemberships.userId))
    .where(
      and(
        inArray(companyMemberships.companyId, wanted),
        eq(companyMemberships.role, "owner"),
        isNull(runners.revokedAt),
        sql`${runners.connectedAt} IS NOT NULL`,
        sql`${runners.lastSeenAt} > ${now - RUNNER_SILENCE_MS}`,
        listedFor(sql`${runners.id}`, sql`${companyMemberships.companyId}`),
      ),
    );
  return new Set(rows.map((row) => row.companyId));
}

/** Whether `userId` is an owner (not only a member) of the company. */
export async function ownsCompany(db: Db, userId: string, companyId: string): Promise<boolean> {
  const row = await db
    .select({ role: companyMemberships.role })
    .from(companyMemberships)
    .where(and(eq(companyMemberships.companyId, companyId), eq(companyMemberships.userId, userId)))
    .get();
  return row?.role === "owner";
}

/** Refuses a member who is not an owner: only owners decide which machines run their agents. */
export async function requireOwner(db: Db, userId: string, companyId: string, what: string): Promise<void> {
  if (!(await ownsCompany(db, userId, companyId))) throw forbidden(`Only the company's owners may ${what}`);
}

/** A runner of `userId` (404 for anyone else's, as for an unknown id). */
export async function ownRunner(db: Db, userId: string, runnerId: string): Promise<RunnerRow> {
  const row = await db.select().from(runners).where(eq(runners.id, runnerId)).get();
  if (!row || row.ownerUserId !== userId) throw notFound("Runner not found");
  return row;
}

/** The companies each runner lists, in the order they were attached. */
export async function listedCompanies(db: Db, runnerIds: readonly string[]): Promise<Map<string, string[]>> {
  const listed = new Map<string, string[]>(runnerIds.map((id) => [id, []]));
  if (runnerIds.length === 0) return listed;
  const rows = await db
    .select()
    .from(runnerCompanies)
    .where(inArray(runnerCompanies.runnerId, [...runnerIds]))
    .orderBy(asc(runnerCompanies.createdAt));
  for (const row of rows) listed.get(row.runnerId)?.push(row.companyId);
  return listed;
}

export function runnerResource(row: RunnerRow, companyIds: readonly string[], now = Date.now()) {
  return {
    id: row.id,
    name: row.name,
    ownerUserId: row.ownerUserId,
    tokenPrefix: row.tokenPrefix,
    allCompanies: row.allCompanies,
    companyIds: [...companyIds],
    connected: isConnected(row, now),
    capabilities: row.capabilities,
    version: row.version,
    maxConcurrentRuns: row.maxConcurrentRuns,
    lastSeenAt: row.lastSeenAt === null ? null : iso(row.lastSeenAt),
    createdAt: iso(row.createdAt),
    revokedAt: row.revokedAt === null ? null : iso(row.revokedAt),
  };
}

/** How often a runner's heartbeats are written down: often enough for "connected", rarely enough for D1. */
const SEEN_WRITE_INTERVAL_MS = 30_000;

/** A link opened and the runner said hello: what it reported, and that it is connected now. */
export async function runnerConnected(
  db: Db,
  runnerId: string,
  hello: { version: string; capabilities: Record<string, unknown> },
): Promise<void> {
  const now = Date.now();
  await db
    .update(runners)
    .set({ version: hello.version, capabilities: hello.capabilities, connectedAt: now, lastSeenAt: now })
    .where(and(eq(runners.id, runnerId), isNull(runners.revokedAt)));
}

/** The runner spoke (a heartbeat): refreshes last-seen, at most once per interval. */
export async function runnerSeen(db: Db, runnerId: string, now = Date.now()): Promise<void> {
  await db
    .update(runners)
    .set({ lastSeenAt: now })
    .where(
      and(
        eq(runners.id, runnerId),
        isNull(runners.revokedAt),
        sql`(${runners.lastSeenAt} IS NULL OR ${runners.lastSeenAt} < ${now - SEEN_WRITE_INTERVAL_MS})`,
      ),
    );
}

/** The runner's last link closed. */
export async function runnerDisconnected(db: Db, runnerId: string): Promise<void> {
  await db.update(runners).set({ connectedAt: null }).where(eq(runners.id, runnerId));
}
