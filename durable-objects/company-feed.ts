import { DurableObject } from "cloudflare:workers";
import { type LiveSocketHost, ownerTagOf } from "../workers/auth/live-sockets";
import { BoardFromLog } from "../workers/control/events/board";
import { CompanyEventStreams, POLL_MS } from "../workers/control/events/stream";
import {
  type CompanyFeedObject,
  closeViewer,
  interestOf,
  type LiveChange,
  LiveFeed,
  sinceOf,
} from "../workers/control/live";
import type { Env } from "../workers/core/env";

/**
 * One per company (named by its id): the issue board's live feed and the company's public event
 * streams, both read from the company's activity log in D1 (workers/control/events/board.ts and
 * stream.ts), so a change reaches them whether or not its writer lived to announce it. A writer's
 * `nudge` after its commit makes them look at once; while a page or stream is open an alarm looks
 * again every POLL_MS for what nobody announced. Changes that are not in the log (a notification, an
 * issue-less run's progress) are `publish`ed to the board's feed directly. See workers/control/live.
 */
export class CompanyFeed extends DurableObject<Env> implements CompanyFeedObject, LiveSocketHost {
  readonly #feed = new LiveFeed(this.ctx);
  readonly #streams = new CompanyEventStreams(this.ctx, this.env.DB);
  readonly #board = new BoardFromLog(this.ctx, this.env.DB, this.#feed);

  /**
   * The board's socket, or (at /events-stream) a public event stream; the Worker checked the caller's
   * membership, the Origin and the cursor before forwarding.
   */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket")
      return new Response("Expected a WebSocket upgrade", { status: 426 });
    const url = new URL(request.url);
    if (url.pathname === "/events-stream")
      return this.#streams.accept(
        url.searchParams.get("company") ?? "",
        Number(url.searchParams.get("after") ?? "0"),
        ownerTagOf(request.url),
      );
    // What the log holds past the board's cursor is numbered before this page's hello.
    await this.#board.catchUp(this.ctx.id.name);
    const response = this.#feed.accept(
      sinceOf(request.url),
      interestOf(request.url),
      ownerTagOf(request.url),
    );
    await this.#keepLooking();
    return response;
  }

  async cutSockets(ownerTag: string, code: number, reason: string): Promise<number> {
    return this.#feed.cut(ownerTag, code, reason);
  }

  async nudge(companyId: string): Promise<boolean> {
    this.ctx.waitUntil(this.#streams.nudge());
    await this.#board.nudge(companyId);
    return this.#feed.watching() || this.#streams.open();
  }

  async publish(change: LiveChange): Promise<void> {
    this.#feed.publish(change);
    this.ctx.waitUntil(this.#streams.nudge());
  }

  /** While a page or an event stream is open: look for entries nobody announced. */
  override async alarm(): Promise<void> {
    await Promise.all([this.#streams.poll(), this.#board.nudge(undefined)]);
    await this.#keepLooking();
  }

  /** Listeners only listen (pings are answered by the runtime). */
  override async webSocketMessage(): Promise<void> {}

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    closeViewer(ws, code);
  }

  async #keepLooking(): Promise<void> {
    if (!this.#feed.watching()) return;
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + POLL_MS);
  }
}
