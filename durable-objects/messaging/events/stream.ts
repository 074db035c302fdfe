import { ownerTagOf } from "../../../workers/auth/live-sockets";
import { EVENT_STREAM_TAG, loggedEventOf, pastRetention, readAfter } from "./log";

/**
 * The session's events live over a WebSocket (issue 33): a stream replays the log from its cursor, then
 * follows it, each event sent once in order as the log (log.ts) and the webhooks carry it. A stream is
 * listen-only, like the pairing page's viewers (`viewer: true`, so the session's socket handlers leave
 * it alone and ending the caller's access closes it: session/viewers.ts `cutViewers`).
 */
interface StreamAttachment {
  viewer: true;
  stream: { cursor: number; slug: string };
}

/** Entries read from the log at a time. */
const PAGE = 500;
/** Most entries one push sends a socket before yielding to other work; the rest follow at once after. */
const PUSH_BUDGET = 5_000;

/**
 * Opens a stream after the URL's `after` (the Worker checked the caller and the cursor's form), or
 * answers 410 naming the oldest readable cursor when it is past retention.
 */
export function acceptEventStream(ctx: DurableObjectState, sessionId: string, url: string): Response {
  const params = new URL(url).searchParams;
  const stream = {
    after: Number(params.get("after") ?? "0"),
    slug: params.get("slug") ?? "",
    owner: ownerTagOf(url),
  };
  const sql = ctx.storage.sql;
  const gone = pastRetention(sql, stream.after);
  if (gone)
    return new Response(`cursor past retention; read from after=${gone.oldestCursor}`, {
      status: 410,
      headers: { "X-Oldest-Cursor": gone.oldestCursor },
    });
  const { 0: client, 1: server } = new WebSocketPair();
  ctx.acceptWebSocket(server, stream.owner === null ? [EVENT_STREAM_TAG] : [EVENT_STREAM_TAG, stream.owner]);
  server.serializeAttachment({
    viewer: true,
    stream: { cursor: stream.after, slug: stream.slug },
  } satisfies StreamAttachment);
  sendNew(server, sql, sessionId);
  return new Response(null, { status: 101, webSocket: client });
}

/** Sends every open stream what the log holds past its cursor (called after each appended event). */
export function pushToEventStreams(ctx: DurableObjectState, sessionId: string): void {
  for (const ws of ctx.getWebSockets(EVENT_STREAM_TAG)) sendNew(ws, ctx.storage.sql, sessionId);
}

function sendNew(ws: WebSocket, sql: SqlStorage, sessionId: string): void {
  const attachment = ws.deserializeAttachment() as Partial<StreamAttachment> | null;
  if (!attachment?.stream || ws.readyState !== WebSocket.OPEN) return;
  const { slug } = attachment.stream;
  let cursor = attachment.stream.cursor;
  let sent = 0;
  try {
    while (sent < PUSH_BUDGET) {
      const rows = readAfter(sql, cursor, PAGE);
      for (const row of rows) ws.send(JSON.stringify(loggedEventOf(sessionId, slug, row)));
      cursor = rows.at(-1)?.seq ?? cursor;
      sent += rows.length;
      if (rows.length < PAGE) break;
    }
  } catch {
    return; // closing: its close handler cleans up
  }
  ws.serializeAttachment({ viewer: true, stream: { cursor, slug } } satisfies StreamAttachment);
  if (sent >= PUSH_BUDGET) setTimeout(() => sendNew(ws, sql, sessionId), 0);
}
