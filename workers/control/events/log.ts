import { and, asc, eq, gt, gte, max, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type ActivityRow, activityLog, eventLogHorizons } from "../../db/schema";

/**
 * A company's control-plane events from a cursor (issue 33, docs/events.md): its activity log read in
 * `seq` order. Every control-plane write inserts its activity row in the same D1 batch as the change,
 * so an event exists exactly when its change committed; `seq` is AUTOINCREMENT and D1 commits one
 * transaction at a time, so a row committed later always has a larger `seq` and a reader following
 * the cursor never skips one that commits behind it.
 */

/** Most events one page returns (as the session's log). */
export const MAX_COMPANY_EVENTS_PAGE = 1000;
/** The horizon row of the activity log in event_log_horizons. */
const ACTIVITY_LOG = "activity";
/** Rows one prune statement deletes, so a large backlog is removed in steps D1 accepts. */
const PRUNE_STEP = 5_000;

/** One event as the page and the stream carry it. */
export interface CompanyEvent {
  /** The activity entry's id (GET /companies/{id}/activity shows the same entry). */
  id: string;
  cursor: string;
  event: string;
  companyId: string;
  timestamp: string;
  data: {
    actorType: ActivityRow["actorType"];
    actorId: string;
    entityType: string;
    entityId: string;
    details: ActivityRow["details"];
  };
}

export type CompanyEventRow = Pick<
  ActivityRow,
  | "seq"
  | "id"
  | "companyId"
  | "actorType"
  | "actorId"
  | "action"
  | "entityType"
  | "entityId"
  | "details"
  | "createdAt"
>;

export function companyEventOf(row: CompanyEventRow): CompanyEvent {
  return {
    id: row.id,
    cursor: String(row.seq),
    event: row.action,
    companyId: row.companyId,
    timestamp: new Date(row.createdAt).toISOString(),
    data: {
      actorType: row.actorType,
      actorId: row.actorId,
      entityType: row.entityType,
      entityId: row.entityId,
      details: row.details,
    },
  };
}

/** A cursor as the API takes it: "0" (the beginning) or an event's cursor; null when malformed. */
export function parseCompanyCursor(cursor: string): number | null {
  return /^\d{1,15}$/.test(cursor) ? Number(cursor) : null;
}

/** The company's events after `after`, oldest first (at most `limit`). */
export function companyEventsAfter(db: Db, companyId: string, after: number, limit: number) {
  return db
    .select({
      seq: activityLog.seq,
      id: activityLog.id,
      companyId: activityLog.companyId,
      actorType: activityLog.actorType,
      actorId: activityLog.actorId,
      action: activityLog.action,
      entityType: activityLog.entityType,
      entityId: activityLog.entityId,
      details: activityLog.details,
      createdAt: activityLog.createdAt,
    })
    .from(activityLog)
    .where(and(eq(activityLog.companyId, companyId), gt(activityLog.seq, after)))
    .orderBy(asc(activityLog.seq))
    .limit(limit);
}

const horizonQuery = (db: Db) =>
  db
    .select({ seq: eventLogHorizons.prunedThroughSeq })
    .from(eventLogHorizons)
    .where(eq(eventLogHorizons.log, ACTIVITY_LOG));

/** The cursor below which entries were pruned (0 when nothing was): an older cursor would miss events. */
export async function activityPrunedThrough(db: Db): Promise<number> {
  return (await horizonQuery(db).get())?.seq ?? 0;
}

/** The oldest readable cursor when `after` is older than the retention, else null. */
export async function oldestCursorIfGone(db: Db, after: number): Promise<string | null> {
  const oldest = await activityPrunedThrough(db);
  return after >= oldest ? null : String(oldest);
}

/**
 * The company's events after `after`, or the oldest readable cursor when `after` is past retention:
 * the horizon and the entries are read in one batch, so a prune cannot fall between the two.
 */
export async function readCompanyEvents(
  db: Db,
  companyId: string,
  after: number,
  limit: number,
): Promise<{ rows: CompanyEventRow[] } | { oldestCursor: string }> {
  const [horizon, rows] = await db.batch([horizonQuery(db), companyEventsAfter(db, companyId, after, limit)]);
  const oldest = horizon[0]?.seq ?? 0;
  return after >= oldest ? { rows } : { oldestCursor: String(oldest) };
}

/**
 * Deletes the entries written before `before` (epoch ms) up to the first one that is not, in `seq`
 * order (so the log never gets a hole, and finding the cut reads only what goes), and records the
 * horizon in the same batch as each step: a reader never meets a missing entry without the 410 that
 * says so. Answers how many entries were removed.
 */
export async function pruneActivity(db: Db, before: number): Promise<number> {
  const young = await db
    .select({ seq: activityLog.seq })
    .from(activityLog)
    .where(gte(activityLog.createdAt, before))
    .orderBy(asc(activityLog.seq))
    .limit(1)
    .get();
  const through = young ? young.seq - 1 : await newestSeq(db);
  if (through <= (await activityPrunedThrough(db))) return 0;
  let removed = 0;
  for (;;) {
    const [deleted] = await db.batch([
      db
        .delete(activityLog)
        .where(
          sql`${activityLog.seq} IN (SELECT al.seq FROM activity_log al WHERE al.seq <= ${through} ORDER BY al.seq LIMIT ${PRUNE_STEP})`,
        )
        .returning({ seq: activityLog.seq }),
      db
        .insert(eventLogHorizons)
        .values({ log: ACTIVITY_LOG, prunedThroughSeq: through })
        .onConflictDoUpdate({
          target: eventLogHorizons.log,
          set: {
            prunedThroughSeq: sql`max(${eventLogHorizons.prunedThroughSeq}, excluded.pruned_through_seq)`,
          },
        }),
    ]);
    removed += deleted.length;
    if (deleted.length < PRUNE_STEP) return removed;
  }
}

const newestSeq = async (db: Db): Promise<number> =>
  (
    await db
      .select({ seq: max(activityLog.seq) })
      .from(activityLog)
      .get()
  )?.seq ?? 0;

/** Days the activity log keeps entries (ACTIVITY_RETENTION_DAYS), or null: kept for good (the default). */
export function activityRetentionDays(setting: string | undefined): number | null {
  if (setting === undefined || !/^\d{1,5}$/.test(setting.trim())) return null;
  const days = Number(setting.trim());
  return days > 0 ? days : null;
}

/** The hourly sweep: prunes entries older than the deployment's retention, when it set one. */
export async function pruneExpiredActivity(
  db: Db,
  setting: string | undefined,
  now: number,
): Promise<number> {
  const days = activityRetentionDays(setting);
  return days === null ? 0 : pruneActivity(db, now - days * 86_400_000);
}
