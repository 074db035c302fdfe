import type { Db } from "../../db/client";
import { issueReadStates } from "../../db/schema";

/** Who read which issue when: the Mine inbox's "last touched" (routes/inbox.ts). */
export interface ReadMark {
  issueId: string;
  companyId: string;
  userId: string;
}

/** The upsert of a read mark, unexecuted, to join a batch (POST /issues/{id}/read logs it too). */
export const readMarkUpsert = (db: Db, mark: ReadMark, now: number) =>
  db
    .insert(issueReadStates)
    .values({ ...mark, lastReadAt: now })
    .onConflictDoUpdate({
      target: [issueReadStates.issueId, issueReadStates.userId],
      set: { lastReadAt: now },
    });

/**
 * The person opened the issue's page: it is read, as Mark read would say, but without an activity
 * row (an open is not an event of the issue). A failure costs only the Unread marker, so it is logged.
 */
export async function markOpened(db: Db, mark: ReadMark, now: number): Promise<void> {
  try {
    await readMarkUpsert(db, mark, now);
  } catch (error) {
    console.error(JSON.stringify({ level: "error", msg: "read mark failed", error: String(error) }));
  }
}
