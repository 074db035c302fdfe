import { and, eq } from "drizzle-orm";
import type { RunSession } from "../../../bridge/src/protocol/runner";
import type { Db } from "../../db/client";
import { type AgentRow, agentTaskSessions, type HeartbeatRunRow } from "../../db/schema";

/**
 * Session continuity: the CLI session an agent had on an issue is handed to its next run for that
 * issue, which resumes it (the runner checks it was made in the same directory and starts afresh when
 * the CLI rejects it). Keyed by agent, issue and adapter type: another CLI cannot resume it.
 */

const key = (agentId: string, issueId: string, adapterType: string) =>
  and(
    eq(agentTaskSessions.agentId, agentId),
    eq(agentTaskSessions.issueId, issueId),
    eq(agentTaskSessions.adapterType, adapterType),
  );

/** The session to resume for a run: only wakes about an issue have one. */
export async function sessionFor(db: Db, run: HeartbeatRunRow, agent: AgentRow): Promise<RunSession | null> {
  if (!run.issueId) return null;
  const row = await db
    .select({ id: agentTaskSessions.sessionId, cwd: agentTaskSessions.cwd })
    .from(agentTaskSessions)
    .where(key(agent.id, run.issueId, agent.adapterType))
    .get();
  return row ?? null;
}

/** What the run's finish said: a session to keep (replacing the last), null to forget it, or nothing. */
export async function recordSession(
  db: Db,
  run: HeartbeatRunRow,
  adapterType: string,
  session: RunSession | null | undefined,
  now: number,
): Promise<void> {
  if (session === undefined || !run.issueId) return;
  if (session === null) {
    await db.delete(agentTaskSessions).where(key(run.agentId, run.issueId, adapterType));
    return;
  }
  const values = { sessionId: session.id, cwd: session.cwd, runId: run.id, updatedAt: now };
  await db
    .insert(agentTaskSessions)
    .values({ companyId: run.companyId, agentId: run.agentId, issueId: run.issueId, adapterType, ...values })
    .onConflictDoUpdate({
      target: [agentTaskSessions.agentId, agentTaskSessions.issueId, agentTaskSessions.adapterType],
      set: values,
    });
}
