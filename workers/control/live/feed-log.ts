/**
 * Where a LiveFeed keeps its numbered events: the SQLite storage of the Durable Object that hosts it.
 * A CompanyFeed hosts one feed (its board) in `live_events`; an IssueDO hosts the feeds of many
 * issues (one shard of a company's issues, control/issues/object.ts), each keyed by its issue id in
 * `keyed_live_events`. Numbers are per feed.
 */
export interface FeedLog {
  /** The feed's name among the many its object hosts; absent for an object's only feed. */
  readonly key?: string;
  /** Creates the log's tables if they are missing (before the first write or read of this life). */
  ensure(): void;
  /** Whether a socket ever connected to this feed (its log exists). Reads storage; cache the answer. */
  everWatched(): boolean;
  /** Remembers that a socket connected, so changes from now on are logged even after a restart. */
  markWatched(): void;
  insert(seq: number, frame: string): void;
  /** Drops the events numbered `seq` and below. */
  trimThrough(seq: number): void;
  maxSeq(): number;
  newest(): { seq: number; frame: string } | undefined;
  after(since: number): { seq: number; frame: string }[];
}

type Row = { seq: number; frame: string };

/** The one feed of an object, in `live_events` (a CompanyFeed's board). */
export function singleFeedLog(sql: SqlStorage): FeedLog {
  return {
    ensure: () =>
      void sql.exec("CREATE TABLE IF NOT EXISTS live_events (seq INTEGER PRIMARY KEY, frame TEXT NOT NULL)"),
    everWatched: () =>
      sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'live_events'").toArray().length >
      0,
    // The table's existence is the mark (ensure() made it).
    markWatched: () => undefined,
    insert: (seq, frame) => void sql.exec("INSERT INTO live_events (seq, frame) VALUES (?, ?)", seq, frame),
    trimThrough: (seq) => void sql.exec("DELETE FROM live_events WHERE seq <= ?", seq),
    maxSeq: () => sql.exec<{ seq: number | null }>("SELECT max(seq) AS seq FROM live_events").one().seq ?? 0,
    newest: () => sql.exec<Row>("SELECT seq, frame FROM live_events ORDER BY seq DESC LIMIT 1").toArray()[0],
    after: (since) =>
      sql.exec<Row>("SELECT seq, frame FROM live_events WHERE seq > ? ORDER BY seq", since).toArray(),
  };
}

const KEYED_TABLES = [
  "CREATE TABLE IF NOT EXISTS keyed_live_events (feed TEXT NOT NULL, seq INTEGER NOT NULL, frame TEXT NOT NULL, PRIMARY KEY (feed, seq)) WITHOUT ROWID",
  "CREATE TABLE IF NOT EXISTS watched_feeds (feed TEXT PRIMARY KEY) WITHOUT ROWID",
];

/**
 * The logs of the many feeds one object hosts (an IssueDO: one per issue), by key. The tables are
 * the object's: they are made once per life of the object, not once per feed. Which feeds were ever
 * watched is read once per life too (one statement for the whole shard, not one per issue first
 * touched: a checkout of an issue nobody watches then runs no statement here at all). It holds only
 * issues someone opened, and only this object adds to it.
 */
export function keyedFeedLogs(sql: SqlStorage): (key: string) => FeedLog {
  let made = false;
  let watched: Set<string> | undefined;
  const ensure = () => {
    if (made) return;
    for (const statement of KEYED_TABLES) sql.exec(statement);
    made = true;
  };
  const watchedFeeds = (): Set<string> => {
    if (watched) return watched;
    ensure();
    watched = new Set(
      sql
        .exec<{ feed: string }>("SELECT feed FROM watched_feeds")
        .toArray()
        .map((row) => row.feed),
    );
    return watched;
  };
  return (key) => keyedFeedLog(sql, key, ensure, watchedFeeds);
}

function keyedFeedLog(
  sql: SqlStorage,
  key: string,
  ensure: () => void,
  watchedFeeds: () => Set<string>,
): FeedLog {
  return {
    key,
    ensure,
    everWatched: () => watchedFeeds().has(key),
    markWatched: () => {
      sql.exec("INSERT OR IGNORE INTO watched_feeds (feed) VALUES (?)", key);
      watchedFeeds().add(key);
    },
    insert: (seq, frame) =>
      void sql.exec("INSERT INTO keyed_live_events (feed, seq, frame) VALUES (?, ?, ?)", key, seq, frame),
    trimThrough: (seq) =>
      void sql.exec("DELETE FROM keyed_live_events WHERE feed = ? AND seq <= ?", key, seq),
    maxSeq: () =>
      sql
        .exec<{ seq: number | null }>("SELECT max(seq) AS seq FROM keyed_live_events WHERE feed = ?", key)
        .one().seq ?? 0,
    newest: () =>
      sql
        .exec<Row>("SELECT seq, frame FROM keyed_live_events WHERE feed = ? ORDER BY seq DESC LIMIT 1", key)
        .toArray()[0],
    after: (since) =>
      sql
        .exec<Row>(
          "SELECT seq, frame FROM keyed_live_events WHERE feed = ? AND seq > ? ORDER BY seq",
          key,
          since,
        )
        .toArray(),
  };
}
