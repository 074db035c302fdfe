import { and, asc, eq, sql } from "drizzle-orm";
import type { RunnerFrame } from "../../../bridge/src/protocol/runner";
import type { TranscriptEvent } from "../../../bridge/src/protocol/transcript";
import type { Db } from "../../db/client";
import { heartbeatRunEvents, heartbeatRuns, type JsonObject } from "../../db/schema";
import { type AnnouncedRun, announcedColumns } from "./live";
import type { OutputRedactor } from "./redaction";

/**
 * A run's transcript: the structured events its runner's adapter read from the CLI's output, stored
 * in order beside the raw log (which stays whole, secrets scrubbed from both). Bounded per run like the log.
 */

type EventFrame = Extract<RunnerFrame, { type: "event" }>;
/** A run's stored transcript stops growing here. */
const EVENTS_MAX = 2_000;

/**
 * Stores one event; ignored for runs this link does not hold, or past the bound. Answers the run
 * whose transcript grew (null when nothing was stored), for the issue page's feed.
 */
export async function recordEvent(
  db: Db,
  linkId: string,
  frame: EventFrame,
  redactor: OutputRedactor,
): Promise<AnnouncedRun | null> {
  if (frame.seq >= EVENTS_MAX) return null;
  const run = await db
    .select(announcedColumns)
    .from(heartbeatRuns)
    .where(and(eq(heartbeatRuns.id, frame.runId), eq(heartbeatRuns.runnerLinkId, linkId)))
    .get();
  if (!run) return null;
  // Events are whole (the adapter parsed them from complete lines): each string is scrubbed as it is.
  const { type, ...data } = (await redactor.scrubber(db, run)).scrubJson(frame.event);
  await db
    .insert(heartbeatRunEvents)
    .values({ runId: run.id, seq: frame.seq, type, data: data as JsonObject, createdAt: Date.now() })
    .onConflictDoNothing();
  return run;
}

/** Whether every event frame the runner says it sent has been stored. */
export async function eventsComplete(db: Db, runId: string, eventFrames: number): Promise<boolean> {
  const expected = Math.min(eventFrames, EVENTS_MAX);
  if (expected === 0) return true;
  const row = await db
    .select({ count: sql<number>`count(*)` })
    .from(heartbeatRunEvents)
    .where(eq(heartbeatRunEvents.runId, runId))
    .get();
  return (row?.count ?? 0) >= expected;
}

export type StoredEvent = TranscriptEvent & { seq: number; createdAt: string };

export async function runEvents(db: Db, runId: string): Promise<StoredEvent[]> {
  const rows = await db
    .select()
    .from(heartbeatRunEvents)
    .where(eq(heartbeatRunEvents.runId, runId))
    .orderBy(asc(heartbeatRunEvents.seq));
  return rows.map(
    (row) =>
      ({
        seq: row.seq,
        createdAt: new Date(row.createdAt).toISOString(),
        ...row.data,
        type: row.type,
      }) as StoredEvent,
  );
}
