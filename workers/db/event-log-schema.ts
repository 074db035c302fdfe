import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * How far a log was pruned: a cursor below `prunedThroughSeq` would miss events (answered 410). One row
 * per log (`activity` for the companies' events).
 */
export const eventLogHorizons = sqliteTable("event_log_horizons", {
  log: text("log").primaryKey(),
  prunedThroughSeq: integer("pruned_through_seq").notNull(),
});
