import { and, asc, eq, inArray } from "drizzle-orm";
import type { Actor, ActorRef } from "../../core/actor";
import type { Db } from "../../db/client";
import { iso } from "../../db/client";
import {
  type JsonObject,
  type RoutineRow,
  type RoutineRunRow,
  type RoutineTriggerRow,
  routines,
  routineTriggers,
} from "../../db/schema";
import { forbidden, notFound } from "../../http/errors";
import { activityInsert, ensureVisible } from "../shared";

/** Loading, permission checks and rendering shared by the routine modules. */

export async function visibleRoutine(db: Db, actor: Actor, routineId: string): Promise<RoutineRow> {
  const row = await db.select().from(routines).where(eq(routines.id, routineId)).get();
  return ensureVisible(db, actor, row, "Routine");
}

export async function visibleTrigger(
  db: Db,
  actor: Actor,
  triggerId: string,
): Promise<{ trigger: RoutineTriggerRow; routine: RoutineRow }> {
  const found = await db
    .select({ trigger: routineTriggers, routine: routines })
    .from(routineTriggers)
    .innerJoin(routines, eq(routines.id, routineTriggers.routineId))
    .where(eq(routineTriggers.id, triggerId))
    .get();
  await ensureVisible(db, actor, found?.routine, "Routine trigger");
  if (!found) throw notFound("Routine trigger not found");
  return found;
}

/** The spec: an agent may create and change only routines assigned to itself; the board any. */
export function assertMayChange(actor: Actor, assigneeAgentId: string, what: string): void {
  if (actor.type === "agent" && actor.agentId !== assigneeAgentId)
    throw forbidden(`An agent may ${what} only routines assigned to itself`);
}

export const triggersOf = (db: Db, routineIds: string[]) =>
  routineIds.length === 0
    ? Promise.resolve([])
    : db
        .select()
        .from(routineTriggers)
        .where(inArray(routineTriggers.routineId, routineIds))
        .orderBy(asc(routineTriggers.createdAt), asc(routineTriggers.id));

export const scheduleTriggersOf = (db: Db, routineId: string) =>
  db
    .select()
    .from(routineTriggers)
    .where(and(eq(routineTriggers.routineId, routineId), eq(routineTriggers.kind, "schedule")));

const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

export const routineResource = (row: RoutineRow) => ({
  id: row.id,
  companyId: row.companyId,
  title: row.title,
  description: row.description,
  assigneeAgentId: row.assigneeAgentId,
  projectId: row.projectId,
  priority: row.priority as "critical" | "high" | "medium" | "low",
  status: row.status,
  concurrencyPolicy: row.concurrencyPolicy,
  catchUpPolicy: row.catchUpPolicy,
  createdByUserId: row.createdByUserId,
  createdByAgentId: row.createdByAgentId,
  createdAt: iso(row.createdAt),
  updatedAt: iso(row.updatedAt),
});

/** Never the signing secret: it is shown once, in `secretMaterial`. */
export const triggerResource = (row: RoutineTriggerRow) => ({
  id: row.id,
  companyId: row.companyId,
  routineId: row.routineId,
  kind: row.kind,
  label: row.label,
  enabled: row.enabled,
  cronExpression: row.cronExpression,
  timezone: row.timezone,
  nextRunAt: isoOrNull(row.nextRunAt),
  lastFiredAt: isoOrNull(row.lastFiredAt),
  publicId: row.publicId,
  replayWindowSec: row.replayWindowSec,
  createdAt: iso(row.createdAt),
  updatedAt: iso(row.updatedAt),
});

export const routineRunResource = (row: RoutineRunRow) => ({
  id: row.id,
  companyId: row.companyId,
  routineId: row.routineId,
  triggerId: row.triggerId,
  source: row.source,
  status: row.status,
  issueId: row.issueId,
  heartbeatRunId: row.heartbeatRunId,
  scheduledFor: isoOrNull(row.scheduledFor),
  payload: row.payload ?? null,
  reason: row.reason,
  createdAt: iso(row.createdAt),
});

export interface RoutineActivity {
  companyId: string;
  /** null: the system acted (a schedule tick, a signed webhook). */
  actor: ActorRef | null;
  action: string;
  entityType: string;
  entityId: string;
  details?: JsonObject;
}

/** The activity insert for a routine mutation; system-initiated ones are logged as actor `system`. */
export function routineActivity(db: Db, entry: RoutineActivity, now: number) {
  return activityInsert(db, { ...entry, actor: entry.actor ?? { type: "system", process: "routines" } }, now);
}
