/**
 * A stand-in for the edge's bridge endpoints over real WebSockets on 127.0.0.1: the fleet socket and one
 * session socket per session, with the bearer check, `welcome`, acks (which a test can withhold), commands
 * and close codes. It records every frame so tests can assert on exactly what the bridge sent.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import {
  type AuthState,
  type BridgeToFleet,
  BridgeToFleetSchema,
  type BridgeToSession,
  BridgeToSessionSchema,
  CLOSE,
  type CommandName,
  type FleetToBridge,
  LINK_HEARTBEAT,
  parseFrame,
  type SessionEvent,
  type SessionToBridge,
} from "../../../bridge/src/protocol/link.ts";
import type { Json } from "../../../bridge/src/protocol/seam.ts";
import { type FakeMedia, partsEndpoint } from "./fake-edge-parts.ts";

type EventFrame = Extract<BridgeToSession, { type: "event" }>;
export type ResultFrame = Extract<BridgeToSession, { type: "result" }>;

/**
 * How the fake DO treats events: `auto` stores and acks; `store-only` stores but the acks are "lost"
 * (not sent); `none` neither stores nor acks (as if the DO never got them).
 */
export type AckMode = "auto" | "store-only" | "none";

export interface FakeSession {
  readonly id: string;
  epoch: number;
  desired: "running" | "stopped";
  auth: AuthState;
  /** Highest seq stored in the current epoch (sent as `welcome.lastSeq`). */
  lastSeq: number;
  ackMode: AckMode;
  /** When set, upgrades for this session are refused with this HTTP status. */
  refuseWith: number | null;
  /** Events stored, in order, without duplicates. */
  readonly stored: SessionEvent[];
  /** Every event frame received, duplicates included. */
  readonly eventFrames: EventFrame[];
  readonly results: ResultFrame[];
  /** Session sockets accepted so far. */
  connections: number;
  /** Frames whose epoch was not the current one (the real DO closes 4400 on those). */
  staleFrames: number;
  socket: WebSocket | null;
  /** Close codes of this session's sockets, as seen by the edge. */
  readonly closes: number[];
}

export type { FakeMedia };

export interface FakeFleet {
  readonly frames: BridgeToFleet[];
  connections: number;
  /** When set, fleet upgrades are refused with this HTTP status (423: the id is live elsewhere). */
  refuseWith: number | null;
  /** Fleet upgrades refused because of `refuseWith`. */
  refused: number;
  /** Heartbeat pings answered, on any socket (the real edge answers them without waking the DO). */
  pings: number;
  socket: WebSocket | null;
  query: URLSearchParams | null;
  readonly closes: number[];
}

export interface FakeEdge {
  /** http://127.0.0.1:<port>, as EDGE_URL would be given. */
  readonly url: string;
  readonly token: string;
  readonly fleet: FakeFleet;
  /** Upgrades refused for a bad or missing bearer token. */
  readonly unauthorized: { count: number };
  /** Frames from the bridge that failed the protocol schema (should stay empty). */
  readonly protocolErrors: string[];
  /** The media store, by `<sessionId>/<ref>`: put uploads here, find downloads here. */
  readonly media: Map<string, FakeMedia>;
  /** Every media request, as `<METHOD> <sessionId>/<ref> <status>`. */
  readonly mediaRequests: string[];
  /** Stored records of own messages by `<sessionId>/<messageId>` (sentMessagePath); requests in `mediaRequests`. */
  readonly sent: Map<string, Json>;
  session(id: string): FakeSession;
  sendFleet(frame: FleetToBridge): void;
  /** Sends a command; returns its id. */
  sendCommand(sessionId: string, name: CommandName, args?: Record<string, Json>, deadline?: number): string;
  /** Sends a command and waits for its result. */
  command(sessionId: string, name: CommandName, args?: Record<string, Json>): Promise<ResultFrame>;
  /** Stores and acks everything received but not yet acked. */
  ackAll(sessionId: string): void;
  closeSession(sessionId: string, code: number, reason?: string): void;
  /** Drops the TCP connection without a close frame. */
  terminateSession(sessionId: string): void;
  close(): Promise<void>;
}

function newSession(id: string): FakeSession {
  return {
    id,
    epoch: 1,
    desired: "running",
    auth: { creds: null, keys: {} },
    lastSeq: 0,
    ackMode: "auto",
    refuseWith: null,
    stored: [],
    eventFrames: [],
    results: [],
    connections: 0,
    staleFrames: 0,
    socket: null,
    closes: [],
  };
}

function applyAuth(auth: AuthState, event: Extract<SessionEvent, { kind: "auth" }>): void {
  if (event.creds !== undefined) auth.creds = event.creds;
  for (const [key, value] of Object.entries(event.keys ?? {})) {
    if (value === null) delete auth.keys[key];
    else auth.keys[key] = value;
  }
}

function refuse(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

export async function startFakeEdge(token = "test-bridge-token"): Promise<FakeEdge> {
  const sessions = new Map<string, FakeSession>();
  const fleet: FakeFleet = {
    frames: [],
    connections: 0,
    refuseWith: null,
    refused: 0,
    pings: 0,
    socket: null,
    query: null,
    closes: [],
  };
  /** As the edge's WebSocket auto-response does: `ping` gets `pong`, and the object never sees it. */
  const answeredPing = (ws: WebSocket, text: string): boolean => {
    if (text !== LINK_HEARTBEAT.ping) return false;
    fleet.pings++;
    ws.send(LINK_HEARTBEAT.pong);
    return true;
  };
  const unauthorized = { count: 0 };
  const protocolErrors: string[] = [];
  const waiting = new Map<string, (result: ResultFrame) => void>();
  const media = new Map<string, FakeMedia>();
  const mediaRequests: string[] = [];
  const sent = new Map<string, Json>();
  const server = createServer((req, res) => {
    serveMedia(req, res).catch(() => res.writeHead(500).end());
  });

  /** The edge's media endpoint (mediaPath in bridge/src/protocol/messaging.ts), behind the same bearer token. */
  const serveMedia = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://edge");
    const sentMatch = /^\/bridge\/v1\/sessions\/([^/]+)\/sent\/([^/]+)$/.exec(url.pathname);
    if (sentMatch?.[1] && sentMatch[2]) {
      const key = `${decodeURIComponent(sentMatch[1])}/${decodeURIComponent(sentMatch[2])}`;
      const record = req.headers.authorization === `Bearer ${token}` ? sent.get(key) : undefined;
      const status = req.headers.authorization !== `Bearer ${token}` ? 401 : record ? 200 : 404;
      mediaRequests.push(`GET sent ${key} ${status}`);
      res
        .writeHead(status, { "content-type": "application/json" })
        .end(record ? JSON.stringify({ raw: record }) : "");
      return;
    }
    const match =
      /^\/bridge\/v1\/sessions\/([^/]+)\/media\/([A-Za-z0-9_-]+)(\/parts(?:\/(\d+|complete))?)?$/.exec(
        url.pathname,
      );
    if (!match?.[1] || !match[2]) return void res.writeHead(404).end();
    const key = `${decodeURIComponent(match[1])}/${match[2]}`;
    const answer = (status: number, headers: Record<string, string> = {}, body?: Buffer) => {
      mediaRequests.push(`${req.method} ${key}${match[3] ?? ""} ${status}`);
      res.writeHead(status, headers).end(body);
    };
    if (req.headers.authorization !== `Bearer ${token}`) return answer(401);
    if (match[3]) return serveParts(req, key, match[4], url.searchParams.get("uploadId"), answer);
    if (req.method === "GET") {
      const file = media.get(key);
      if (!file) return answer(404);
      const headers: Record<string, string> = { "content-type": file.mimetype };
      if (file.fileName) headers["x-file-name"] = encodeURIComponent(file.fileName);
      return answer(200, headers, file.bytes);
    }
    if (req.method === "PUT") {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const name = req.headers["x-file-name"];
      media.set(key, {
        bytes: Buffer.concat(chunks),
        mimetype: req.headers["content-type"] ?? "",
        ...(typeof name === "string" ? { fileName: decodeURIComponent(name) } : {}),
      });
      return answer(204);
    }
    answer(405);
  };
  const serveParts = partsEndpoint(media);
  const wss = new WebSocketServer({ noServer: true });

  const session = (id: string): FakeSession => {
    let found = sessions.get(id);
    if (!found) {
      found = newSession(id);
      sessions.set(id, found);
    }
    return found;
  };

  const store = (state: FakeSession, frame: EventFrame): void => {
    if (frame.seq <= state.lastSeq) return; // duplicate: already stored
    state.lastSeq = frame.seq;
    state.stored.push(frame.event);
    if (frame.event.kind === "auth") applyAuth(state.auth, frame.event);
  };

  const send = (ws: WebSocket | null, frame: SessionToBridge | FleetToBridge): void => {
    if (ws?.readyState === WebSocket.OPEN) ws.send(JSON.stringify(frame));
  };

  const onSessionSocket = (state: FakeSession, ws: WebSocket): void => {
    state.connections++;
    state.socket = ws;
    // As the SessionDO does: the version that last connected the session rides along.
    const lastVersion = state.stored
      .filter((event): event is Extract<SessionEvent, { kind: "connected" }> => event.kind === "connected")
      .map((event) => event.waVersion)
      .filter((version) => version !== undefined)
      .at(-1);
    send(ws, {
      type: "welcome",
      epoch: state.epoch,
      desired: state.desired,
      auth: state.auth,
      lastSeq: state.lastSeq,
      ...(lastVersion ? { waVersion: lastVersion.version } : {}),
    });
    ws.on("message", (data) => {
      if (answeredPing(ws, data.toString())) return;
      const frame = parseFrame(BridgeToSessionSchema, data.toString());
      if (!frame) {
        protocolErrors.push(data.toString());
        return ws.close(CLOSE.BAD_FRAME, "bad frame");
      }
      if (frame.epoch !== state.epoch) {
        state.staleFrames++;
        return;
      }
      if (frame.type === "result") {
        state.results.push(frame);
        waiting.get(frame.id)?.(frame);
        waiting.delete(frame.id);
        return;
      }
      state.eventFrames.push(frame);
      if (state.ackMode === "none") return;
      store(state, frame);
      if (state.ackMode === "auto") send(ws, { type: "ack", seq: frame.seq });
    });
    ws.on("close", (code) => {
      state.closes.push(code);
      if (state.socket === ws) state.socket = null;
    });
  };

  const onFleetSocket = (ws: WebSocket, query: URLSearchParams): void => {
    fleet.connections++;
    fleet.socket = ws;
    fleet.query = query;
    ws.on("message", (data) => {
      if (answeredPing(ws, data.toString())) return;
      const frame = parseFrame(BridgeToFleetSchema, data.toString());
      if (!frame) {
        protocolErrors.push(data.toString());
        return ws.close(CLOSE.BAD_FRAME, "bad frame");
      }
      fleet.frames.push(frame);
    });
    ws.on("close", (code) => {
      fleet.closes.push(code);
      if (fleet.socket === ws) fleet.socket = null;
    });
  };

  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (request.headers.authorization !== `Bearer ${token}`) {
      unauthorized.count++;
      return refuse(socket, 401, "Unauthorized");
    }
    const url = new URL(request.url ?? "/", "http://edge");
    if (url.pathname === "/bridge/v1/fleet") {
      if (fleet.refuseWith !== null) {
        fleet.refused++;
        return refuse(socket, fleet.refuseWith, "Refused");
      }
      return wss.handleUpgrade(request, socket, head, (ws) => onFleetSocket(ws, url.searchParams));
    }
    const match = /^\/bridge\/v1\/sessions\/([^/]+)$/.exec(url.pathname);
    if (!match?.[1] || !url.searchParams.get("bridge")) return refuse(socket, 400, "Bad Request");
    const state = session(decodeURIComponent(match[1]));
    if (state.refuseWith !== null) return refuse(socket, state.refuseWith, "Refused");
    wss.handleUpgrade(request, socket, head, (ws) => onSessionSocket(state, ws));
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const sendCommand = (
    sessionId: string,
    name: CommandName,
    args: Record<string, Json> = {},
    deadline = Date.now() + 30_000,
  ): string => {
    const id = randomUUID();
    send(session(sessionId).socket, { type: "command", id, name, args, deadline });
    return id;
  };

  return {
    url: `http://127.0.0.1:${port}`,
    token,
    fleet,
    unauthorized,
    protocolErrors,
    media,
    mediaRequests,
    sent,
    session,
    sendFleet: (frame) => send(fleet.socket, frame),
    sendCommand,
    command: (sessionId, name, args = {}) =>
      new Promise((resolve) => waiting.set(sendCommand(sessionId, name, args), resolve)),
    ackAll(sessionId) {
      const state = session(sessionId);
      for (const frame of state.eventFrames) store(state, frame);
      if (state.lastSeq > 0) send(state.socket, { type: "ack", seq: state.lastSeq });
    },
    closeSession(sessionId, code, reason = "") {
      session(sessionId).socket?.close(code, reason);
    },
    terminateSession(sessionId) {
      session(sessionId).socket?.terminate();
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export { CLOSE };
