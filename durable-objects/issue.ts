import { DurableObject } from "cloudflare:workers";
import { closeSockets, type LiveSocketHost, ownerTagOf } from "../workers/auth/live-sockets";
import type {
  AppliedOutcome,
  IssueLocation,
  IssueObject,
  IssueOperation,
  IssueOutcome,
} from "../workers/control/issues";
import { announceOnIssue, applyIssueOperation, readIssueDetailJson } from "../workers/control/issues";
import {
  announceNotifications,
  closeViewer,
  feedKeyOf,
  interestOf,
  isBoardChange,
  keyedFeedLogs,
  type LiveChange,
  LiveFeed,
  nudgeCompanyFeed,
  sinceOf,
} from "../workers/control/live";
import { rememberBounded } from "../workers/core/bounded-map";
import type { Env } from "../workers/core/env";
import { KeyedQueue } from "../workers/core/keyed-queue";
import { database } from "../workers/db/client";

/**
 * After this long a cached detail is refreshed from D1: it bounds how long the detail may reflect
 * other entities' old state (its project's or goal's name, an ancestor's title or status) to about
 * this plus one D1 read. The issue's own state is never stale: every mutation of the issue runs here
 * and drops the cached detail before it answers.
 */
export const DETAIL_TTL_MS = 5_000;

/**
 * Details kept in memory per object (the oldest go first; a dropped one is read again from D1): a
 * detail is a few KiB, and the objects of an isolate share its 128 MiB.
 */
export const MAX_CACHED_DETAILS = 500;

/** Issue feeds kept in memory per object; a dropped one reads its newest number again when used. */
const MAX_FEEDS = 2_000;

interface CachedDetail {
  json: string;
  expiresAt: number;
}

/**
 * One per shard of a company's issues (control/issues/object.ts names it), holding each of them.
 * D1 has no interactive transactions, so every read-check-write on an issue (checkout, transition,
 * comment, document revision) runs here, one after another for that issue, and commits with one
 * batch. The queues are explicit because each step awaits D1, and input gates do not hold across
 * such awaits; issues of the same shard do not wait on each other.
 *
 * It also serves its issues' details from memory: agents poll their issues, and a D1 round trip per
 * poll is the dominant cost of that read.
 *
 * And it hosts each issue's live feed: every committed mutation is announced to the issue page's
 * sockets (and, for changes the board shows, the company's CompanyFeed is nudged) in commit order.
 */
export class IssueDO extends DurableObject<Env> implements IssueObject, LiveSocketHost {
  /** Each issue's operations, one at a time. */
  readonly #operations = new KeyedQueue();
  readonly #details = new Map<string, CachedDetail>();
  readonly #refreshing = new Map<string, Promise<unknown>>();
  /** Bumped by every mutation, so a read that overlapped one is answered but never cached. */
  #generation = 0;
  readonly #feeds = new Map<string, LiveFeed>();
  readonly #logs = keyedFeedLogs(this.ctx.storage.sql);

  apply(location: IssueLocation, op: IssueOperation): Promise<IssueOutcome> {
    return this.#operations.run(location.id, () =>
      applyIssueOperation(database(this.env.DB), location, op)
        .finally(() => this.#forgetDetail(location.id))
        .then((outcome) => this.#announce(outcome)),
    );
  }

  /** An issue page's socket; the Worker checked the caller and the Origin before forwarding. */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket")
      return new Response("Expected a WebSocket upgrade", { status: 426 });
    const issueId = feedKeyOf(request.url);
    if (issueId === null) return new Response("No issue named", { status: 400 });
    return this.#feed(issueId).accept(sinceOf(request.url), interestOf(request.url), ownerTagOf(request.url));
  }

  /** Closes one owner's sockets on this object's issues: their access to the company ended. */
  async cutSockets(ownerTag: string, code: number, reason: string): Promise<number> {
    return closeSockets(this.ctx.getWebSockets(ownerTag), code, reason);
  }

  async publish(change: LiveChange): Promise<void> {
    this.#publish(change);
  }

  /** Viewers only listen (pings are answered by the runtime). */
  override async webSocketMessage(): Promise<void> {}

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    closeViewer(ws, code);
  }

  /** The change committed whatever happens to its announcement: a feed failure is logged, not answered. */
  #announce({ change, relays, notified, ...outcome }: AppliedOutcome): IssueOutcome {
    if (!outcome.ok || !change) return outcome;
    try {
      this.#publish(change);
    } catch (error) {
      console.error(
        JSON.stringify({ level: "error", msg: "live feed publish failed", error: String(error) }),
      );
    }
    // Not awaited, like the board's nudge: each dependent's own object numbers the news.
    for (const relay of relays ?? []) this.ctx.waitUntil(announceOnIssue(this.env, relay));
    if (notified) this.ctx.waitUntil(announceNotifications(this.env, notified.companyId, notified.userIds));
    return outcome;
  }

  #publish(change: LiveChange): void {
    if ("issueId" in change && typeof change.issueId === "string") this.#feed(change.issueId).publish(change);
    // The board reads its news from the activity log, which committed with the change: this only
    // makes it look now. Not awaited: the mutation's caller should not wait on the board.
    if (isBoardChange(change)) this.ctx.waitUntil(nudgeCompanyFeed(this.env, change.companyId));
  }

  /** The issue's feed (its numbers and sockets), made on first use in this life of the object. */
  #feed(issueId: string): LiveFeed {
    let feed = this.#feeds.get(issueId);
    if (feed) return feed;
    feed = new LiveFeed(this.ctx, { keepUnwatched: false, log: this.#logs(issueId) });
    rememberBounded(this.#feeds, issueId, feed, MAX_FEEDS);
    return feed;
  }

  /**
   * The issue's detail as JSON text, or null when the issue no longer exists. Past its TTL a cached
   * detail is still answered while one refresh runs behind it, so a poller never waits on D1 for a
   * detail that only other entities could have changed.
   */
  async detail(location: IssueLocation): Promise<string | null> {
    const cached = this.#details.get(location.id);
    if (!cached) return this.#readDetail(location);
    if (cached.expiresAt <= Date.now() && !this.#refreshing.has(location.id)) {
      const refresh = this.#readDetail(location)
        .catch(() => undefined) // the stale copy keeps serving; the next request tries again
        .finally(() => this.#refreshing.delete(location.id));
      this.#refreshing.set(location.id, refresh);
    }
    return cached.json;
  }

  async #readDetail(location: IssueLocation): Promise<string | null> {
    const generationAtRead = this.#generation;
    const json = await readIssueDetailJson(database(this.env.DB), location);
    if (json !== null && generationAtRead === this.#generation) {
      rememberBounded(
        this.#details,
        location.id,
        { json, expiresAt: Date.now() + DETAIL_TTL_MS },
        MAX_CACHED_DETAILS,
      );
    }
    return json;
  }

  #forgetDetail(issueId: string): void {
    this.#details.delete(issueId);
    this.#generation++;
  }
}
