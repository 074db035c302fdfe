import { DurableObject } from "cloudflare:workers";
import { type LiveSocketHost, ownerTagOf } from "../workers/auth/live-sockets";
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
 * state but the feed's recent events; see workers/control/live.
 */
export class CompanyFeed extends DurableObject<Env> implements CompanyFeedObject, LiveSocketHost {
  readonly #feed = new LiveFeed(this.ctx);

  /** The board's socket; the Worker checked the caller's membership and Origin before forwarding. */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket")
      return new Response("Expected a WebSocket upgrade", { status: 426 });
    return this.#feed.accept(sinceOf(request.url), interestOf(request.url), ownerTagOf(request.url));
  }

  async cutSockets(ownerTag: string, code: number, reason: string): Promise<number> {
    return this.#feed.cut(ownerTag, code, reason);
  }

  async publish(change: LiveChange): Promise<void> {
    this.#feed.publish(change);
  }

  /** Listeners only listen (pings are answered by the runtime). */
  override async webSocketMessage(): Promise<void> {}

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    closeViewer(ws, code);
  }
}
