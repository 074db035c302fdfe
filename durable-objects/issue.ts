import { DurableObject } from "cloudflare:workers";
import { type LiveSocketHost, ownerTagOf } from "../workers/auth/live-sockets";
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
  interestOf,
  isBoardChange,
  type LiveChange,
  LiveFeed,
  nudgeCompanyFeed,
  sinceOf,
} from "../workers/control/live";
import type { Env } from "../workers/core/env";
import { database } from "../workers/db/client";

/**
 * After this long a cached detail is refreshed from D1: it bounds how long the detail may reflect
 * other entities' old state (its project's or goal's name, an ancestor's title or status) to about
 * this plus one D1 read. The issue's own state is never stale: every mutation of the issue runs here
 * and drops the cached detail before it answers.
 */
export const DETAIL_TTL_MS = 5_000;

interface CachedDetail {
  json: string;
  expiresAt: number;
}

/**
 * One per control-plane issue, named by the issue id (after the caller's company was checked).
 * D1 has no interactive transactions, so every read-check-write on an issue (checkout, transition,
 * comment, document revision) runs here, strictly one after another, and commits with one batch.
 * The queue is explicit because each step awaits D1, and input gates do not hold across such awaits.
 *
 * It also serves the issue's detail from memory: agents poll their issues, and a D1 round trip per
 * poll is the dominant cost of that read.
 *
 * And it is the issue's live feed: every committed mutation is announced to the issue page's sockets
 * (and, for changes the board shows, relayed to the company's CompanyFeed) in commit order.
 */
export class IssueDO extends DurableObject<Env> implements IssueObject, LiveSocketHost {
  #tail: Promise<unknown> = Promise.resolve();
  #detail: CachedDetail | undefined;
  #refreshing: Promise<unknown> | undefined;
  /** Bumped by every mutation, so a read that overlapped one is answered but never cached. */
  #generation = 0;

  readonly #feed = new LiveFeed(this.ctx, { keepUnwatched: false });

  apply(issueId: string, op: IssueOperation): Promise<IssueOutcome> {
    const run = this.#tail
      .then(() => applyIssueOperation(database(this.env.DB), issueId, op))
      .finally(() => this.#forgetDetail())
      .then((outcome) => this.#announce(outcome));
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /** The issue page's socket; the Worker checked the caller and the Origin before forwarding. */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket")
      return new Response("Expected a WebSocket upgrade", { status: 426 });
    return this.#feed.accept(sinceOf(request.url), interestOf(request.url), ownerTagOf(request.url));
  }

  /** Closes one owner's sockets on this issue: their access ended (workers/auth/live-sockets.ts). */
  async cutSockets(ownerTag: string, code: number, reason: string): Promise<number> {
    return this.#feed.cut(ownerTag, code, reason);
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
    // Not awaited, like the board's relay: each dependent's own object numbers the news.
    for (const relay of relays ?? []) this.ctx.waitUntil(announceOnIssue(this.env, relay));
    if (notified) this.ctx.waitUntil(announceNotifications(this.env, notified.companyId, notified.userIds));
    return outcome;
  }

  #publish(change: LiveChange): void {
    this.#feed.publish(change);
    // The board reads its news from the activity log, which committed with the change: this only
    // makes it look now. Not awaited: the mutation's caller should not wait on the board.
    if (isBoardChange(change)) this.ctx.waitUntil(nudgeCompanyFeed(this.env, change.companyId));
  }

  /**
   * The issue's detail as JSON text, or null when the issue no longer exists. Past its TTL a cached
   * detail is still answered while one refresh runs behind it, so a poller never waits on D1 for a
   * detail that only other entities could have changed.
   */
  async detail(location: IssueLocation): Promise<string | null> {
    const cached = this.#detail;
    if (!cached) return this.#readDetail(location);
    if (cached.expiresAt <= Date.now())
      this.#refreshing ??= this.#readDetail(location)
        .catch(() => undefined) // the stale copy keeps serving; the next request tries again
        .finally(() => {
          this.#refreshing = undefined;
        });
    return cached.json;
  }

  async #readDetail(location: IssueLocation): Promise<string | null> {
    const generationAtRead = this.#generation;
    const json = await readIssueDetailJson(database(this.env.DB), location);
    if (json !== null && generationAtRead === this.#generation) {
      this.#detail = { json, expiresAt: Date.now() + DETAIL_TTL_MS };
    }
    return json;
  }

  #forgetDetail(): void {
    this.#detail = undefined;
    this.#generation++;
  }
}
