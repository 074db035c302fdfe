import { and, desc, eq, gte, lt, or, type SQL, sql } from "drizzle-orm";
import { type ActorRef, activityActor, type SystemActor } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { type ActivityRow, activityLog, type JsonObject } from "../../db/schema";
import { badRequest } from "../../http/errors";
import { cappedTotal, pageOf } from "./paging";
import { actorNames } from "./people";
import { redactSecrets } from "./redact";

export interface ActivityEntry {
  companyId: string;
  actor: ActorRef | SystemActor;
  /** `<entity>.<verb>`, e.g. `issue.checked_out`, `agent.paused`. */
  action: string;
  entityType: string;
  entityId: string;
  details?: JsonObject;
}

/**
 * The insert for one activity row, unexecuted, so it joins the batch of the mutation it records:
 * a change and its log entry commit together or not at all.
 */
export function activityInsert(db: Db, entry: ActivityEntry, now = Date.now()) {
  return db.insert(activityLog).values({
    id: newId(),
    companyId: entry.companyId,
    ...activityActor(entry.actor),
    action: entry.action,
    entityType: entry.entityType,
    entityId: entry.entityId,
    details: redactSecrets(entry.details ?? {}),
    createdAt: now,
  });
}

export interface ActivityFilter {
  agentId?: string;
  actorType?: "user" | "agent" | "system";
  /** Exact, or every action of an entity when it ends in a dot (`agent.`). */
  action?: string;
  entityType?: string;
  entityId?: string;
  /** Epoch ms, inclusive. */
  since?: number;
  /** Epoch ms, exclusive. */
  until?: number;
  /** An entry's id: the page continues with the entries older than it. */
  before?: string;
  limit: number;
}

/** Older than `entry` in the log's order (newest first, the id breaking ties). */
const olderThan = (entry: { createdAt: number; id: string }) =>
  or(
    lt(activityLog.createdAt, entry.createdAt),
    and(eq(activityLog.createdAt, entry.createdAt), lt(activityLog.id, entry.id)),
  ) as SQL;

function filterConditions(companyId: string, filter: ActivityFilter): SQL[] {
  const conditions: SQL[] = [eq(activityLog.companyId, companyId)];
  if (filter.agentId)
    conditions.push(and(eq(activityLog.actorType, "agent"), eq(activityLog.actorId, filter.agentId)) as SQL);
  if (filter.actorType) conditions.push(eq(activityLog.actorType, filter.actorType));
  if (filter.action?.endsWith("."))
    conditions.push(
      // substr, not LIKE: "_" is a wildcard there and actions are full of underscores.
      sql`substr(${activityLog.action}, 1, ${filter.action.length}) = ${filter.action}`,
    );
  else if (filter.action) conditions.push(eq(activityLog.action, filter.action));
  if (filter.entityType) conditions.push(eq(activityLog.entityType, filter.entityType));
  if (filter.entityId) conditions.push(eq(activityLog.entityId, filter.entityId));
  if (filter.since !== undefined) conditions.push(gte(activityLog.createdAt, filter.since));
  if (filter.until !== undefined) conditions.push(lt(activityLog.createdAt, filter.until));
  return conditions;
}

/** The company's log, newest first; a `before` id of another company (or none) is a 400. */
export async function listActivity(
  db: Db,
  companyId: string,
  filter: ActivityFilter,
): Promise<ActivityRow[]> {
  const conditions = filterConditions(companyId, filter);
  if (filter.before) {
    const cursor = await db
      .select({ createdAt: activityLog.createdAt, id: activityLog.id })
      .from(activityLog)
      .where(and(eq(activityLog.companyId, companyId), eq(activityLog.id, filter.before)))
      .get();
    if (!cursor) throw badRequest("before: no such activity entry in this company");
    conditions.push(olderThan(cursor));
  }
  return db
    .select()
    .from(activityLog)
    .where(and(...conditions))
    .orderBy(desc(activityLog.createdAt), desc(activityLog.id))
    .limit(filter.limit);
}

/** One page of the log (`limit` entries), its total over the filters, and the next page's `before`. */
export async function activityPage(db: Db, companyId: string, filter: ActivityFilter) {
  const [rows, total] = await Promise.all([
    listActivity(db, companyId, { ...filter, limit: filter.limit + 1 }),
    cappedTotal(db, activityLog, and(...filterConditions(companyId, filter))),
  ]);
  return { ...pageOf(rows, filter.limit, (last) => last.id), total };
}

export const activityResource = (row: ActivityRow, actorName: string | null) => ({
  id: row.id,
  companyId: row.companyId,
  actorType: row.actorType,
  actorId: row.actorId,
  actorName,
  action: row.action,
  entityType: row.entityType,
  entityId: row.entityId,
  details: row.details,
  createdAt: new Date(row.createdAt).toISOString(),
});

/** A page of the log with its actors' names (users and agents), resolved in one batched read. */
export async function namedActivity(db: Db, companyId: string, rows: readonly ActivityRow[]) {
  const of = (type: ActivityRow["actorType"]) =>
    rows.filter((row) => row.actorType === type).map((row) => row.actorId);
  const names = await actorNames(db, companyId, { userIds: of("user"), agentIds: of("agent") });
  const nameFor = (row: ActivityRow) =>
    row.actorType === "user"
      ? names.user(row.actorId)
      : row.actorType === "agent"
        ? names.agent(row.actorId)
        : null;
  return rows.map((row) => activityResource(row, nameFor(row)));
}
