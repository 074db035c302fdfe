import { and, desc, eq, type SQL } from "drizzle-orm";
import { type ActorRef, activityActor, type SystemActor } from "../../core/actor";
import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { type ActivityRow, activityLog, type JsonObject } from "../../db/schema";
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
  entityType?: string;
  entityId?: string;
  limit: number;
}

export async function listActivity(
  db: Db,
  companyId: string,
  filter: ActivityFilter,
): Promise<ActivityRow[]> {
  const conditions: SQL[] = [eq(activityLog.companyId, companyId)];
  if (filter.agentId)
    conditions.push(and(eq(activityLog.actorType, "agent"), eq(activityLog.actorId, filter.agentId)) as SQL);
  if (filter.entityType) conditions.push(eq(activityLog.entityType, filter.entityType));
  if (filter.entityId) conditions.push(eq(activityLog.entityId, filter.entityId));
  return db
    .select()
    .from(activityLog)
    .where(and(...conditions))
    .orderBy(desc(activityLog.createdAt), desc(activityLog.id))
    .limit(filter.limit);
}

export const activityResource = (row: ActivityRow) => ({
  id: row.id,
  companyId: row.companyId,
  actorType: row.actorType,
  actorId: row.actorId,
  action: row.action,
  entityType: row.entityType,
  entityId: row.entityId,
  details: row.details,
  createdAt: new Date(row.createdAt).toISOString(),
});
