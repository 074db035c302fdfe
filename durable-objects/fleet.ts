import { DurableObject } from "cloudflare:workers";
import {
  ALREADY_LINKED,
  BridgeToFleetSchema,
  CLOSE,
  type FleetToBridge,
  parseFrame,
} from "../bridge/src/protocol/link";
import type { Env } from "../workers/core/env";
import type { FleetObject, FleetSnapshot } from "./fleet/contract";
import { sessionObject } from "./session/contract";
import { answerHeartbeats, closeQuietly, isLinkLive, staleAfterMs } from "./shared/link-liveness";

/** How long a bridge whose fleet socket dropped may take to come back before its sessions move. */
const DEFAULT_GRACE_MS = 15_000;
/** Close code a bridge sends when it shuts down on purpose: move its sessions at once. */
const GOING_AWAY = 1001;

interface BridgeAttachment {
  bridge: string;
  openedAt: number;
  /** The bridge process's own id for its fleet link (the `instance` query); "" from older bridges. */
  instance?: string;
}

type Row = Record<string, SqlStorageValue>;

/**
 * The fleet of bridges (one object, named "global"). Bridges register over a control socket with
 * an id (the Worker checked the bridge's credential is bound to it) and a capacity; sessions that
 * should run are assigned to the least-loaded live bridge. Before a bridge hears `assign`, the
 * session's own object grants it the lease, so the bridge can dial in at once. One live socket per
 * bridge id: a second is refused (423) rather than kicking the first off. A bridge whose socket drops
 * (or goes silent) keeps its sessions for a grace period; after that they move to other bridges (or
 * wait, as pending, for one to register).
 */
export class BridgeFleet extends DurableObject<Env> implements FleetObject {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS bridges (
      id TEXT PRIMARY KEY, capacity INTEGER NOT NULL, connected INTEGER NOT NULL, disconnected_at INTEGER)`);
    ctx.storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS assignments (session_id TEXT PRIMARY KEY, bridge_id TEXT)`,
    );
    ctx.storage.sql.exec("CREATE INDEX IF NOT EXISTS assignments_bridge ON assignments (bridge_id)");
    answerHeartbeats(ctx);
  }

  // ── RPC ────────────────────────────────────────────────────────────────────────────────────

  /** Makes sure a live bridge holds `sessionId`; idempotent. Returns the bridge id, or null (pending). */
  async assign(sessionId: string): Promise<string | null> {
    const current = this.sql<{ bridge_id: string | null }>(
      "SELECT a.bridge_id FROM assignments a JOIN bridges b ON b.id = a.bridge_id WHERE a.session_id = ? AND b.connected = 1",
      sessionId,
    )[0];
    if (current?.bridge_id) return current.bridge_id;
    return this.placeSession(sessionId);
  }

  async release(sessionId: string): Promise<void> {
    const row = this.sql<{ bridge_id: string | null }>(
      "SELECT bridge_id FROM assignments WHERE session_id = ?",
      sessionId,
    )[0];
    this.ctx.storage.sql.exec("DELETE FROM assignments WHERE session_id = ?", sessionId);
    if (row?.bridge_id) this.sendTo(row.bridge_id, { type: "unassign", session: sessionId });
  }

  /** The bridge's credential was revoked: cut it off and move its sessions now, not after a grace. */
  async disconnect(bridge: string): Promise<void> {
    for (const ws of this.ctx.getWebSockets(bridge)) closeQuietly(ws, CLOSE.REVOKED, "credential revoked");
    this.ctx.storage.sql.exec(
      "UPDATE bridges SET connected = 0, disconnected_at = ? WHERE id = ?",
      Date.now(),
      bridge,
    );
    await this.evacuate(bridge);
  }

  async snapshot(): Promise<FleetSnapshot> {
    const bridges = this.sql<{ id: string; capacity: number; connected: number; sessions: number }>(
      `SELECT b.id, b.capacity, b.connected, (SELECT count(*) FROM assignments a WHERE a.bridge_id = b.id) AS sessions
       FROM bridges b ORDER BY b.id`,
    );
    const pending =
      this.sql<{ n: number }>("SELECT count(*) AS n FROM assignments WHERE bridge_id IS NULL")[0]?.n ?? 0;
    return { bridges: bridges.map((b) => ({ ...b, connected: b.connected === 1 })), pending };
  }

  // ── Bridge control sockets ─────────────────────────────────────────────────────────────────

  /** WebSocket upgrade from a bridge; the Worker has checked its credential names this id. */
  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const bridge = url.searchParams.get("bridge") ?? "";
    const capacity = Number(url.searchParams.get("capacity"));
    const instance = url.searchParams.get("instance") ?? "";
    const sockets = this.ctx.getWebSockets(bridge);
    const live = sockets.filter((ws) => this.isLive(ws));
    if (live.some((ws) => !this.isSameProcess(ws, instance))) {
      return new Response(`Bridge ${bridge} is already connected`, { status: ALREADY_LINKED });
    }
    for (const stale of sockets) {
      closeQuietly(
        stale,
        1001,
        live.includes(stale) ? "replaced: the bridge dialled again" : "replaced: no heartbeat",
      );
    }
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [bridge]);
    server.serializeAttachment({ bridge, openedAt: Date.now(), instance } satisfies BridgeAttachment);
    this.ctx.storage.sql.exec(
      `INSERT INTO bridges (id, capacity, connected, disconnected_at) VALUES (?, ?, 1, NULL)
       ON CONFLICT (id) DO UPDATE SET capacity = excluded.capacity, connected = 1, disconnected_at = NULL`,
      bridge,
      capacity,
    );
    await this.scheduleSweep();
    return new Response(null, { status: 101, webSocket: client });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const frame = parseFrame(
      BridgeToFleetSchema,
      typeof message === "string" ? message : new TextDecoder().decode(message),
    );
    const attachment = ws.deserializeAttachment() as BridgeAttachment | null;
    if (!frame || !attachment) {
      ws.close(CLOSE.BAD_FRAME, "invalid frame");
      return;
    }
    if (frame.type === "released") {
      this.ctx.storage.sql.exec(
        "DELETE FROM assignments WHERE session_id = ? AND bridge_id = ?",
        frame.session,
        attachment.bridge,
      );
      return;
    }
    await this.reconcileHello(attachment.bridge, frame.sessions);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    closeQuietly(ws, code, reason);
    const attachment = ws.deserializeAttachment() as BridgeAttachment | null;
    if (!attachment || this.ctx.getWebSockets(attachment.bridge).some((other) => other !== ws)) return;
    await this.bridgeLeft(attachment.bridge, code === GOING_AWAY);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    await this.webSocketClose(ws, 1006, "error");
  }

  /**
   * Bridges that went silent count as gone from now; bridges that stayed away past the grace period
   * lose their sessions to the others.
   */
  override async alarm(): Promise<void> {
    this.dropSilentBridges();
    const cutoff = Date.now() - this.graceMs();
    const gone = this.sql<{ id: string }>(
      "SELECT id FROM bridges WHERE connected = 0 AND disconnected_at <= ?",
      cutoff,
    );
    for (const { id } of gone) await this.evacuate(id);
    await this.scheduleSweep();
  }

  // ── internals ──────────────────────────────────────────────────────────────────────────────

  /**
   * The socket is an earlier link of the process now dialling: a bridge dials only once it has given
   * up its previous link (closed, or a handshake it abandoned, e.g. timed out while the runtime was
   * still starting), so that socket is dead from the bridge's side even if the edge still hears it as
   * open. Another process with the same id has another instance and is refused as before.
   */
  private isSameProcess(ws: WebSocket, instance: string): boolean {
    const attachment = ws.deserializeAttachment() as BridgeAttachment | null;
    return instance !== "" && attachment?.instance === instance;
  }

  private isLive(ws: WebSocket): boolean {
    const attachment = ws.deserializeAttachment() as BridgeAttachment | null;
    return isLinkLive(this.ctx, ws, attachment?.openedAt ?? 0, staleAfterMs(this.env));
  }

  private async bridgeLeft(bridge: string, onPurpose: boolean): Promise<void> {
    this.ctx.storage.sql.exec(
      "UPDATE bridges SET connected = 0, disconnected_at = ? WHERE id = ?",
      Date.now(),
      bridge,
    );
    if (onPurpose) await this.evacuate(bridge);
    else await this.scheduleSweep();
  }

  /** A connected bridge none of whose sockets is live: its sockets are half-open; the grace starts. */
  private dropSilentBridges(): void {
    const connected = this.sql<{ id: string }>("SELECT id FROM bridges WHERE connected = 1");
    for (const { id } of connected) {
      const sockets = this.ctx.getWebSockets(id);
      if (sockets.some((ws) => this.isLive(ws))) continue;
      for (const ws of sockets) closeQuietly(ws, 1001, "no heartbeat");
      this.ctx.storage.sql.exec(
        "UPDATE bridges SET connected = 0, disconnected_at = ? WHERE id = ?",
        Date.now(),
        id,
      );
    }
  }

  /** The next grace deadline, or the next silence check while any bridge is connected. */
  private async scheduleSweep(): Promise<void> {
    const now = Date.now();
    const away = this.sql<{ at: number | null }>(
      "SELECT min(disconnected_at) AS at FROM bridges WHERE connected = 0",
    )[0]?.at;
    const anyConnected = this.sql<{ n: number }>("SELECT count(*) AS n FROM bridges WHERE connected = 1")[0]
      ?.n;
    const candidates = [
      typeof away === "number" ? away + this.graceMs() : Number.POSITIVE_INFINITY,
      anyConnected ? now + staleAfterMs(this.env) : Number.POSITIVE_INFINITY,
    ];
    const next = Math.min(...candidates);
    if (!Number.isFinite(next)) return;
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > next || current < now)
      await this.ctx.storage.setAlarm(Math.max(next, now));
  }

  /**
   * A (re)connected bridge lists what it holds: it keeps sessions still assigned to it and held, lets
   * go of the rest, and is given again the sessions assigned to it that it no longer holds (it
   * restarted within the grace period: a new lease, so nothing of the old process's link survives).
   * Then it takes pending sessions while it has room.
   */
  private async reconcileHello(bridge: string, held: string[]): Promise<void> {
    const mine = this.sql<{ session_id: string }>(
      "SELECT session_id FROM assignments WHERE bridge_id = ?",
      bridge,
    ).map((r) => r.session_id);
    const holding = new Set(held);
    const assigned = new Set(mine);
    for (const session of held)
      if (!assigned.has(session)) this.sendTo(bridge, { type: "unassign", session });
    for (const session of mine) if (!holding.has(session)) await this.leaseTo(session, bridge);
    const pending = this.sql<{ session_id: string }>(
      "SELECT session_id FROM assignments WHERE bridge_id IS NULL",
    );
    for (const { session_id } of pending) await this.placeSession(session_id);
  }

  private async evacuate(bridge: string): Promise<void> {
    const sessions = this.sql<{ session_id: string }>(
      "SELECT session_id FROM assignments WHERE bridge_id = ?",
      bridge,
    );
    this.ctx.storage.sql.exec("UPDATE assignments SET bridge_id = NULL WHERE bridge_id = ?", bridge);
    this.ctx.storage.sql.exec("DELETE FROM bridges WHERE id = ? AND connected = 0", bridge);
    for (const { session_id } of sessions) await this.placeSession(session_id);
  }

  /**
   * Picks the least-loaded live bridge with room and records the assignment before any await, so
   * concurrent placements see the new load. Then the session's object grants the lease, and only
   * then is the bridge told: when it dials in, the lease is already its own.
   */
  private async placeSession(sessionId: string): Promise<string | null> {
    const target = this.sql<{ id: string }>(
      `SELECT b.id FROM bridges b LEFT JOIN assignments a ON a.bridge_id = b.id AND a.session_id != ?
       WHERE b.connected = 1 GROUP BY b.id HAVING count(a.session_id) < b.capacity
       ORDER BY count(a.session_id) * 1.0 / b.capacity, b.id LIMIT 1`,
      sessionId,
    )[0];
    this.ctx.storage.sql.exec(
      "INSERT INTO assignments (session_id, bridge_id) VALUES (?, ?) ON CONFLICT (session_id) DO UPDATE SET bridge_id = excluded.bridge_id",
      sessionId,
      target?.id ?? null,
    );
    if (!target) {
      await sessionObject(this.env, sessionId).revokeLease(sessionId);
      return null;
    }
    await this.leaseTo(sessionId, target.id);
    return target.id;
  }

  private async leaseTo(sessionId: string, bridge: string): Promise<void> {
    await sessionObject(this.env, sessionId).grantLease(sessionId, bridge);
    this.sendTo(bridge, { type: "assign", session: sessionId });
  }

  private sendTo(bridge: string, frame: FleetToBridge): void {
    for (const ws of this.ctx.getWebSockets(bridge)) {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(frame));
    }
  }

  private graceMs(): number {
    const configured = Number(this.env.FLEET_GRACE_MS);
    return Number.isFinite(configured) && configured > 0 ? configured : DEFAULT_GRACE_MS;
  }

  private sql<T>(query: string, ...bindings: SqlStorageValue[]): T[] {
    return this.ctx.storage.sql.exec<Row>(query, ...bindings).toArray() as T[];
  }
}
