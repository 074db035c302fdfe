import { and, eq } from "drizzle-orm";
import { WAKE_PAYLOAD_MAX_CHARS } from "../../../bridge/src/protocol/runner";
import type { Db } from "../../db/client";
import { type HeartbeatRunRow, routineRuns } from "../../db/schema";

/**
 * The payload a run is handed (RunAssignment.wakePayload, a file and PLATFORM_WAKE_PAYLOAD_PATH on
 * the runner): that of the routine run that queued it, such as a webhook's JSON body. Only this run's
 * assignment carries it. One too large for the assignment is replaced by a note saying where to read it.
 */
export async function wakePayload(db: Db, run: HeartbeatRunRow): Promise<string | null> {
  if (!run.routineRunId) return null;
  const row = await db
    .select({ routineId: routineRuns.routineId, payload: routineRuns.payload })
    .from(routineRuns)
    .where(and(eq(routineRuns.id, run.routineRunId), eq(routineRuns.companyId, run.companyId)))
    .get();
  if (!row?.payload) return null;
  const text = JSON.stringify(row.payload);
  if (text.length <= WAKE_PAYLOAD_MAX_CHARS) return text;
  return JSON.stringify({
    payloadTooLarge: true,
    chars: text.length,
    readItAt: `/api/routines/${row.routineId}/runs (the run with id ${run.routineRunId})`,
  });
}
