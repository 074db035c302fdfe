import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "./client";

/** A read to send with others, or null when there is nothing to ask (it is then not sent). */
export type MaybeRead = BatchItem<"sqlite"> | null;

/**
 * Reads that do not depend on one another in one D1 round trip (a batch is one transaction, so they
 * also see one state of the database), instead of one round trip each. Each answer is the rows its
 * query returned, in the order of `reads`; a null read answers null. The caller built each query and
 * knows its rows' shape.
 */
export async function readTogether(db: Db, reads: readonly MaybeRead[]): Promise<Array<unknown[] | null>> {
  const sent = reads.filter((read): read is BatchItem<"sqlite"> => read !== null);
  const [first, ...rest] = sent;
  const answers: unknown[] = first ? await db.batch([first, ...rest]) : [];
  let next = 0;
  return reads.map((read) => (read === null ? null : (answers[next++] as unknown[])));
}
