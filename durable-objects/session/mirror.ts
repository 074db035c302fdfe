import type { Env } from "../../workers/core/env";
import { sessionConnected } from "../../workers/core/session-connected";
import { statusOf } from "./lifecycle";
import type { SessionRecord } from "./storage";

/** Copies the lifecycle into the D1 directory row so listings need no call to each object. */
export async function mirrorToDirectory(db: D1Database, record: SessionRecord): Promise<void> {
  const { sessionId, state, me } = record;
  if (!sessionId) return;
  await db
    .prepare("UPDATE sessions SET status = ?, state = ?, me = ?, updated_at = ? WHERE id = ?")
    .bind(statusOf(state), state, me ? JSON.stringify(me) : null, Date.now(), sessionId)
    .run();
}

/**
 * A lifecycle event changed the state: the directory row follows, and when the session has just come
 * online, whoever registered for that hears so (a company line sends the notices it queued meanwhile).
 */
export async function stateChanged(
  env: Env,
  before: SessionRecord,
  after: SessionRecord,
  waitUntil: (promise: Promise<unknown>) => void,
): Promise<void> {
  await mirrorToDirectory(env.DB, after);
  if (after.state !== "connected" || before.state === "connected" || !after.sessionId) return;
  await sessionConnected(env, after.sessionId, waitUntil);
}
