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
