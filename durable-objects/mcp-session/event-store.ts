import type { EventStore } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

export interface EventLimits {
  /** Events kept per session, newest first (docs/decisions.md, "MCP sessions"). */
  maxEvents: number;
  /** Bytes of JSON kept per session, newest first. */
  maxBytes: number;
}

export const EVENT_LIMITS: EventLimits = { maxEvents: 500, maxBytes: 4 * 1024 * 1024 };

/** One event above this is not kept as it is (a Durable Object's SQLite value stops at 2 MB). */
const MAX_EVENT_BYTES = 1024 * 1024;

/** An event id: the stream's id and the event's sequence number (0 for a stream's priming event). */
const EVENT_ID = /^([\w-]{1,64})\/(\d{1,15})$/;

/**
 * The SSE events of one session, for resuming a cut stream (`Last-Event-ID`): every message the SDK
 * transport sends is stored here first, in the session object's SQLite, so a resume finds them even
 * after the object was evicted. The id a client is told names its stream and the row's sequence
 * number. A priming event (no message) is not stored: its id alone says where its stream starts, which
 * saves a storage commit on every request (docs/decisions.md, "MCP sessions").
 */
export class SqlEventStore implements EventStore {
  #ready = false;

  constructor(
    private readonly sql: SqlStorage,
    private readonly limits: EventLimits = EVENT_LIMITS,
  ) {}

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    if (!("jsonrpc" in message)) return `${streamId}/0`;
    let text = JSON.stringify(message);
    if (text.length > MAX_EVENT_BYTES) text = JSON.stringify(standInFor(message, text.length));
    const { seq } = this.#table()
      .exec<{ seq: number }>(
        "INSERT INTO mcp_events (stream_id, message, bytes) VALUES (?, ?, ?) RETURNING seq",
        streamId,
        text,
        text.length,
      )
      .one();
    this.#trim();
    return `${streamId}/${seq}`;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    const [, streamId, seq] = EVENT_ID.exec(eventId) ?? [];
    if (streamId === undefined || seq === undefined) return undefined;
    if (seq === "0") return streamId;
    const kept = this.#table()
      .exec("SELECT 1 FROM mcp_events WHERE seq = ? AND stream_id = ?", Number(seq), streamId)
      .toArray();
    return kept.length > 0 ? streamId : undefined;
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const streamId = await this.getStreamIdForEventId(lastEventId);
    if (streamId === undefined) return "";
    const after = Number(lastEventId.slice(streamId.length + 1));
    const rows = this.#table()
      .exec<{ seq: number; message: string }>(
        "SELECT seq, message FROM mcp_events WHERE stream_id = ? AND seq > ? ORDER BY seq",
        streamId,
        after,
      )
      .toArray();
    for (const row of rows) {
      const parsed = JSONRPCMessageSchema.safeParse(JSON.parse(row.message));
      if (parsed.success) await send(`${streamId}/${row.seq}`, parsed.data);
    }
    return streamId;
  }

  /** Forgets every event (the session ended). */
  clear(): void {
    this.#table().exec("DELETE FROM mcp_events");
  }

  /** Drops the oldest events beyond the count and byte limits. */
  #trim(): void {
    this.#table().exec(
      `DELETE FROM mcp_events WHERE seq IN (
         SELECT seq FROM (
           SELECT seq, ROW_NUMBER() OVER newest AS position, SUM(bytes) OVER newest AS kept
           FROM mcp_events WINDOW newest AS (ORDER BY seq DESC)
         ) WHERE position > ? OR kept > ?)`,
      this.limits.maxEvents,
      this.limits.maxBytes,
    );
  }

  #table(): SqlStorage {
    if (!this.#ready) {
      this.sql.exec(
        `CREATE TABLE IF NOT EXISTS mcp_events (seq INTEGER PRIMARY KEY AUTOINCREMENT,
           stream_id TEXT NOT NULL, message TEXT NOT NULL, bytes INTEGER NOT NULL)`,
      );
      this.#ready = true;
    }
    return this.sql;
  }
}

/**
 * What is kept of a message too large to store: a response becomes an error naming the problem (the
 * resumed client learns its call's outcome was lost, rather than waiting for it); anything else an
 * empty placeholder that replay skips.
 */
function standInFor(message: JSONRPCMessage, bytes: number): unknown {
  if (!("id" in message) || "method" in message) return {};
  return {
    jsonrpc: "2.0",
    id: message.id,
    error: {
      code: -32603,
      message: `The response (${bytes} bytes) was too large to keep for a resumed stream`,
    },
  };
}
