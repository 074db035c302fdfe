import { DurableObject } from "cloudflare:workers";
import { type LiveSocketHost, ownerTagOf } from "../workers/auth/live-sockets";
import { CompanyEventStreams } from "../workers/control/events/stream";
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
 * One per company (named by its id): the issue board's live feed. Issue changes reach it from the
 * issue's IssueDO after they commit, and new issues from the route that created them. It holds no
 * state but the feed's recent events; see workers/control/live. It also holds the company's public
 * event streams (workers/control/events/stream.ts), which read the activity log in D1: each change
 * the feed hears nudges them, and an alarm looks again every second while one is open.
 */
export class CompanyFeed extends DurableObject<Env> implements CompanyFeedObject, LiveSocketHost {
  readonly #feed = new LiveFeed(this.ctx);
  readonly #streams = new CompanyEventStreams(this.ctx, this.env.DB);

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
    return this.#feed.accept(sinceOf(request.url), interestOf(request.url), ownerTagOf(request.url));
  }

  async cutSockets(ownerTag: string, code: number, reason: string): Promise<number> {
    return this.#feed.cut(ownerTag, code, reason);
  }

  async publish(change: LiveChange): Promise<void> {
    this.#feed.publish(change);
    this.ctx.waitUntil(this.#streams.nudge());
  }

  /** While an event stream is open: look for entries no change announced. */
  override async alarm(): Promise<void> {
    await this.#streams.poll();
  }

  /** Listeners only listen (pings are answered by the runtime). */
  override async webSocketMessage(): Promise<void> {}

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    closeViewer(ws, code);
  }
}
