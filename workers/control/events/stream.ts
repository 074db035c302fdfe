import { database } from "../../db/client";
import { activityPrunedThrough, companyEventOf, companyEventsAfter } from "./log";

/**
 * A company's events live over a WebSocket (issue 33), held by its CompanyFeed. Each socket keeps its
 * own cursor (in its attachment, so it survives hibernation); a pump sends every socket what the
 * activity log holds past that cursor, so the replay and what follows come from one place and meet
 * without a gap or a repeat. The pump runs when a socket opens, when the company's feed hears a change
 * (a nudge), and every POLL_MS while any stream is open: most control-plane writes announce nothing to
 * the feed, and the log in D1, not the nudge, is what a stream reads.
 */

/** The tag of event-stream sockets (apart from the board's viewers). */
export const COMPANY_STREAM_TAG = "company-event-stream";
/** How often an open stream looks for entries nobody announced. */
export const POLL_MS = 1_000;
/** Entries read from D1 at a time. */
const PAGE = 500;
/** Most entries one socket gets per pump; the next pump (at once) continues. */
const PUSH_BUDGET = 5_000;
/** The close a stream gets when retention removed entries it had not yet been sent. */
export const STREAM_PAST_RETENTION = { code: 4410, reason: "cursor past retention: read from the oldest" };

interface StreamAttachment {
  companyStream: { companyId: string; cursor: number };
}

const attachmentOf = (ws: WebSocket): StreamAttachment["companyStream"] | null =>
  (ws.deserializeAttachment() as Partial<StreamAttachment> | null)?.companyStream ?? null;

export class CompanyEventStreams {
  /** The pump running now, if any; `#again` asks it for one more round (a nudge came meanwhile). */
  #running: Promise<void> | null = null;
  #again = false;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly db: D1Database,
  ) {}

  /** Opens a stream after `after` (the Worker checked the caller, the cursor and its retention). */
  accept(companyId: string, after: number, owner: string | null): Response {
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, owner === null ? [COMPANY_STREAM_TAG] : [COMPANY_STREAM_TAG, owner]);
    server.serializeAttachment({ companyStream: { companyId, cursor: after } } satisfies StreamAttachment);
    this.ctx.waitUntil(this.nudge());
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Whether any stream is open. */
  open(): boolean {
    return this.ctx.getWebSockets(COMPANY_STREAM_TAG).length > 0;
  }

  /** Whether a socket is one of these streams (the object routes its socket handlers by this). */
  static owns(ctx: DurableObjectState, ws: WebSocket): boolean {
    return ctx.getTags(ws).includes(COMPANY_STREAM_TAG);
  }

  /**
   * Sends every open stream what follows its cursor. Rounds never overlap (each reads D1 past a
   * socket's cursor and then moves it): a nudge during a round asks for one more round after it.
   */
  nudge(): Promise<void> {
    this.#again = true;
    this.#running ??= this.#rounds();
    return this.#running;
  }

  /** The alarm: one round, then the next look while any stream stays open. */
  async poll(): Promise<void> {
    await this.nudge();
    await this.#keepPolling();
  }

  async #rounds(): Promise<void> {
    try {
      while (this.#again) {
        this.#again = false;
        await this.#round();
      }
    } catch (error) {
      // D1 failed a read: the sockets keep their cursors, and the next look (a second away) retries.
      console.error(
        JSON.stringify({ level: "error", msg: "company event stream read failed", error: String(error) }),
      );
    } finally {
      this.#running = null;
    }
    await this.#keepPolling();
  }

  async #keepPolling(): Promise<void> {
    if (this.ctx.getWebSockets(COMPANY_STREAM_TAG).length === 0) return;
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + POLL_MS);
  }

  async #round(): Promise<void> {
    const sockets = this.ctx.getWebSockets(COMPANY_STREAM_TAG);
    if (sockets.length === 0) return;
    const db = database(this.db);
    const horizon = await activityPrunedThrough(db);
    for (const ws of sockets) {
      const stream = attachmentOf(ws);
      if (stream === null || ws.readyState !== WebSocket.OPEN) continue;
      if (stream.cursor < horizon) {
        closeQuietly(ws, STREAM_PAST_RETENTION);
        continue;
      }
      const cursor = await this.#send(ws, stream.companyId, stream.cursor);
      if (cursor === null) continue;
      ws.serializeAttachment({ companyStream: { ...stream, cursor } } satisfies StreamAttachment);
    }
  }

  /** Sends one socket the entries after `cursor`; answers the new cursor, or null when it closed. */
  async #send(ws: WebSocket, companyId: string, from: number): Promise<number | null> {
    const db = database(this.db);
    let cursor = from;
    let sent = 0;
    while (sent < PUSH_BUDGET) {
      const rows = await companyEventsAfter(db, companyId, cursor, PAGE);
      try {
        for (const row of rows) ws.send(JSON.stringify(companyEventOf(row)));
      } catch {
        return null; // closing: nothing more to send it
      }
      cursor = rows.at(-1)?.seq ?? cursor;
      sent += rows.length;
      if (rows.length < PAGE) return cursor;
    }
    this.#again = true; // more remains: the next round continues where this one stopped
    return cursor;
  }
}

function closeQuietly(ws: WebSocket, close: { code: number; reason: string }): void {
  try {
    ws.close(close.code, close.reason);
  } catch {
    // already closing
  }
}
