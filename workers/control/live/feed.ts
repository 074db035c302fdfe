import { closeSockets } from "../../auth/live-sockets";
import { type LiveChange, type LiveFrame, type LiveInterest, wants } from "./events";
import { type FeedLog, singleFeedLog } from "./feed-log";

/** Tag of the dashboard's sockets on an object that may hold other sockets too. */
const VIEWER_TAG = "live-viewer";
/** A second tag names what a socket listens for, unless it listens to everything (hibernation keeps tags). */
const INTEREST_PREFIX = "only:";
/** On an object hosting many feeds (an IssueDO shard), the tag naming a socket's feed. */
const FEED_PREFIX = "feed:";
/** Events kept for catching up; a client further behind than this gets `reset` and re-reads the page. */
export const LIVE_EVENTS_KEPT = 200;
/** How often (in events) the log drops what is older than the kept window. */
const TRIM_EVERY = 32;
/** Clients say this about every 30 s; the runtime answers without waking the object. */
const PING = "ping";
const PONG = "pong";

/**
 * A numbered event log with its listeners, inside a Durable Object (an IssueDO for each issue of its
 * shard, keyed by the id; a CompanyFeed for one company's board). SQLite storage is
 * synchronous and publish never awaits, so numbering needs no lock. Sockets use the Hibernation API:
 * an object nobody writes to costs nothing while its pages stay open.
 */
export class LiveFeed {
  readonly #log: FeedLog;
  /** The tag every socket of this feed carries. */
  readonly #tag: string;
  /** The log's tables exist (made or found) in this life of the object. */
  #prepared = false;
  /** The newest event's number, once read. */
  #seq: number | undefined;

  /** This life of the object has found no log for this feed (see `keepUnwatched`). */
  #unwatched = false;
  /** When the newest change that was not logged happened: a first hello still says a change came. */
  #unloggedAt: number | null = null;

  /**
   * `keepUnwatched: false` (an issue's feed): until a first socket ever connects, changes are not
   * logged at all. Nobody can ask to catch up on a feed that never said hello (a `since` only ever
   * comes from one), and most issues are never watched, so their writes skip the log's statements.
   *
   * `log` is one of the many feeds an object hosts (`keyedFeedLogs`: an IssueDO holds a feed per
   * issue); without it the object has one feed (a CompanyFeed's board).
   */
  constructor(
    private readonly ctx: DurableObjectState,
    private readonly options: { keepUnwatched: boolean; log?: FeedLog } = { keepUnwatched: true },
  ) {
    this.#log = options.log ?? singleFeedLog(ctx.storage.sql);
    this.#tag = this.#log.key === undefined ? VIEWER_TAG : FEED_PREFIX + this.#log.key;
  }

  /** Numbers the change, keeps it for catching up, and sends it to every open socket. */
  publish(change: LiveChange, now = Date.now()): LiveFrame {
    if (!this.options.keepUnwatched && this.#neverWatched()) {
      this.#unloggedAt = now;
      return { type: "event", seq: 0, at: now, ...change };
    }
    const log = this.#ready();
    const seq = this.#lastSeq() + 1;
    const frame: LiveFrame = { type: "event", seq, at: now, ...change };
    const text = JSON.stringify(frame);
    log.insert(seq, text);
    this.#seq = seq;
    // Trimmed every so often, not on every event: each statement is CPU on the write's path, and a
    // few dozen extra rows change nothing (catch-up still answers `reset` past what is kept).
    if (seq % TRIM_EVERY === 0) log.trimThrough(seq - LIVE_EVENTS_KEPT);
    for (const ws of this.ctx.getWebSockets(this.#tag))
      if (wants(interestOfTags(this.ctx.getTags(ws)), change)) sendQuietly(ws, text);
    return frame;
  }

  /** Whether any page listens to this feed now. */
  watching(): boolean {
    return this.ctx.getWebSockets(this.#tag).length > 0;
  }

  /**
   * Tells every page to re-read (`reset`), and numbers past the kept window so that a client coming
   * back with an older `since` gets `reset` too: for news the feed could not tell one by one.
   */
  reset(): void {
    const seq = this.#lastSeq() + LIVE_EVENTS_KEPT + 1;
    const text = JSON.stringify({ type: "reset", seq } satisfies LiveFrame);
    this.#ready().insert(seq, text);
    this.#seq = seq;
    for (const ws of this.ctx.getWebSockets(this.#tag)) sendQuietly(ws, text);
  }

  /**
   * A socket for a request the Worker already authorised, tagged with its `owner` (so a revocation can
   * close it): `hello` with the newest seq, then, when `since` is given, every kept event after it
   * that the socket is interested in, or `reset` when the gap cannot be filled. Numbers stay the
   * feed's, so a filtered socket sees gaps between them.
   */
  accept(since: number | null, interest: LiveInterest = "all", owner: string | null = null): Response {
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(PING, PONG));
    const feedTag = this.#tag === VIEWER_TAG ? null : this.#tag;
    const tags = [VIEWER_TAG, feedTag, interestTag(interest), owner].filter((tag) => tag !== null);
    this.ctx.acceptWebSocket(server, tags);
    this.#ready().markWatched();
    const { seq: last, at: loggedAt } = this.#newest();
    // A page drawn just before an unlogged change re-reads itself on this `at`, as after a logged one.
    const at = loggedAt ?? this.#unloggedAt;
    server.send(JSON.stringify({ type: "hello", seq: last, at } satisfies LiveFrame));
    if (since !== null && since !== last)
      for (const text of this.#catchUp(since, last, interest)) server.send(text);
    return new Response(null, { status: 101, webSocket: client });
  }

  /**
   * Closes the sockets of one owner (the tag `ownerTag` of auth/live-sockets.ts the Worker named in
   * the watch request): their access ended.
   */
  cut(ownerTag: string, code: number, reason: string): number {
    return closeSockets(this.ctx.getWebSockets(ownerTag), code, reason);
  }

  /** Whether a socket belongs to a feed (objects with other sockets route their handlers by this). */
  static owns(ctx: DurableObjectState, ws: WebSocket): boolean {
    return ctx.getTags(ws).includes(VIEWER_TAG);
  }

  #catchUp(since: number, last: number, interest: LiveInterest): string[] {
    // The window is the rule, not what trimming happens to have left (it runs every TRIM_EVERY).
    if (since > last || since < last - LIVE_EVENTS_KEPT)
      return [JSON.stringify({ type: "reset", seq: last } satisfies LiveFrame)];
    const rows = this.#ready().after(since);
    // A gap, or a `reset` in range (the window rules that out, but a reset is never replayed as news).
    if (rows[0]?.seq !== since + 1 || rows.some((row) => row.frame.startsWith('{"type":"reset"')))
      return [JSON.stringify({ type: "reset", seq: last } satisfies LiveFrame)];
    if (interest === "all") return rows.map((row) => row.frame);
    return rows.filter((row) => wants(interest, JSON.parse(row.frame) as LiveChange)).map((row) => row.frame);
  }

  /** The newest event's number and time (0 and null for a feed with no event yet). */
  #newest(): { seq: number; at: number | null } {
    const row = this.#ready().newest();
    if (!row) return { seq: 0, at: null };
    // A `reset` (see reset()) has no time of its own.
    return { seq: row.seq, at: (JSON.parse(row.frame) as { at?: number }).at ?? null };
  }

  /** No socket ever connected to this feed: it has no log. Asked once per object life while true. */
  #neverWatched(): boolean {
    if (this.#prepared) return false;
    if (this.#unwatched) return true;
    this.#unwatched = !this.#log.everWatched();
    return this.#unwatched;
  }

  /** Read once per object life, then kept: only this object writes its log, one thing at a time. */
  #lastSeq(): number {
    if (this.#seq !== undefined) return this.#seq;
    this.#seq = this.#ready().maxSeq();
    return this.#seq;
  }

  /** The log, its tables made (once per object life). */
  #ready(): FeedLog {
    if (!this.#prepared) {
      this.#log.ensure();
      this.#prepared = true;
      this.#unwatched = false;
    }
    return this.#log;
  }
}

function sendQuietly(ws: WebSocket, text: string): void {
  try {
    ws.send(text);
  } catch {
    // closing or closed: its client reconnects and catches up
  }
}

/** The value of a watch request's `only` parameter for `interest` (absent for all). */
export function interestParam(interest: LiveInterest): string | null {
  if (interest === "all") return null;
  return interest === "board" ? "board" : `run:${interest.runId}`;
}

function parseInterest(text: string | null): LiveInterest {
  if (text === "board") return "board";
  if (text?.startsWith("run:")) return { runId: text.slice(4) };
  return "all";
}

/** The socket's second tag: `only:` and the same value as the watch request's `only` parameter. */
function interestTag(interest: LiveInterest): string | null {
  const only = interestParam(interest);
  return only === null ? null : INTEREST_PREFIX + only;
}

/** What a socket's tags say it listens for. */
function interestOfTags(tags: readonly string[]): LiveInterest {
  const tag = tags.find((candidate) => candidate.startsWith(INTEREST_PREFIX));
  return tag === undefined ? "all" : parseInterest(tag.slice(INTEREST_PREFIX.length));
}

/** The `only` parameter of a watch request (company-feed.ts `watchRequest`). */
export const interestOf = (url: string): LiveInterest => parseInterest(new URL(url).searchParams.get("only"));

/** The feed a watch request names (`watchRequest`'s `feed`), or null for an object's only feed. */
export const feedKeyOf = (url: string): string | null => new URL(url).searchParams.get("feed");

/** The `since` query parameter: a non-negative integer, or null when absent or malformed. */
export function sinceOf(url: string): number | null {
  const raw = new URL(url).searchParams.get("since");
  if (raw === null || !/^\d{1,15}$/.test(raw)) return null;
  return Number(raw);
}

/** Completes a closing handshake the client started; 1005 and 1006 are not codes a peer may send. */
export function closeViewer(ws: WebSocket, code: number): void {
  try {
    ws.close(code === 1005 || code === 1006 ? 1000 : code, "closing");
  } catch {
    // already closed
  }
}
