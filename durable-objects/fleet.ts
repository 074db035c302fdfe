import { DurableObject } from "cloudflare:workers";
import { BridgeToFleetSchema, CLOSE, type FleetToBridge, parseFrame } from "../bridge/src/protocol/link";
import type { Env } from "../workers/core/env";
import type { FleetObject, FleetSnapshot } from "./fleet/contract";
import { sessionObject } from "./session/contract";

/** How long a bridge whose fleet socket dropped may take to come back before its sessions move. */
const DEFAULT_GRACE_MS = 15_000;
/** Close code a bridge sends when it shuts down on purpose: move its sessions at once. */
const GOING_AWAY = 1001;

interface BridgeAttachment {
  bridge: string;
}

type Row = Record<string, SqlStorageValue>;

/**
 * The fleet of bridges (one object, named "global"). Bridges register over a control socket with
 * an id and a capacity; sessions that should run are assigned to the least-loaded live bridge.
 * Before a bridge hears `assign`, the session's own object grants it the lease, so the bridge can
 * dial in at once. A bridge whose socket drops keeps its sessions for a grace period; after that
 * they move to other bridges (or wait, as pending, for one to register).
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

  /** WebSocket upgrade from a bridge; the Worker has checked its token and the query. */
  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const bridge = url.searchParams.get("bridge") ?? "";
    const capacity = Number(url.searchParams.get("capacity"));
    for (const old of this.ctx.getWebSockets(bridge))
      old.close(CLOSE.LEASE_LOST, "replaced by a newer connection");
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [bridge]);
    server.serializeAttachment({ bridge } satisfies BridgeAttachment);
    this.ctx.storage.sql.exec(
      `INSERT INTO bridges (id, capacity, connected, disconnected_at) VALUES (?, ?, 1, NULL)
       ON CONFLICT (id) DO UPDATE SET capacity = excluded.capacity, connected = 1, disconnected_at = NULL`,
      bridge,
      capacity,
    );
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
    try {
      ws.close(code, reason);
    } catch {
      // already closed
    }
    const attachment = ws.deserializeAttachment() as BridgeAttachment | null;
    if (!attachment || this.ctx.getWebSockets(attachment.bridge).some((other) => other !== ws)) return;
    this.ctx.storage.sql.exec(
      "UPDATE bridges SET connected = 0, disconnected_at = ? WHERE id = ?",
      Date.now(),
      attachment.bridge,
    );
    if (code === GOING_AWAY) await this.evacuate(attachment.bridge);
    else await this.ctx.storage.setAlarm(Date.now() + this.graceMs());
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    await this.webSocketClose(ws, 1006, "error");
  }

  /** Bridges that stayed away past the grace period lose their sessions to the others. */
  override async alarm(): Promise<void> {
    const cutoff = Date.now() - this.graceMs();
    const gone = this.sql<{ id: string }>(
      "SELECT id FROM bridges WHERE connected = 0 AND disconnected_at <= ?",
      cutoff,
    );
    for (const { id } of gone) await this.evacuate(id);
    const waiting = this.sql<{ at: number }>(
      "SELECT min(disconnected_at) AS at FROM bridges WHERE connected = 0 AND disconnected_at > ?",
      cutoff,
    )[0]?.at;
    if (typeof waiting === "number") await this.ctx.storage.setAlarm(waiting + this.graceMs());
  }

  // ── internals ──────────────────────────────────────────────────────────────────────────────

  /**
   * A (re)connected bridge lists what it holds: it keeps sessions still assigned to it, lets go of
   * the rest, and then takes pending sessions while it has room.
   */
  private async reconcileHello(bridge: string, held: string[]): Promise<void> {
    const mine = new Set(
      this.sql<{ session_id: string }>("SELECT session_id FROM assignments WHERE bridge_id = ?", bridge).map(
        (r) => r.session_id,
      ),
    );
    for (const session of held) if (!mine.has(session)) this.sendTo(bridge, { type: "unassign", session });
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
    const session = sessionObject(this.env, sessionId);
    if (!target) {
      await session.revokeLease(sessionId);
      return null;
    }
    await session.grantLease(sessionId, target.id);
    this.sendTo(target.id, { type: "assign", session: sessionId });
    return target.id;
  }

  private sendTo(bridge: string, frame: FleetToBridge): void {
    for (const ws of this.ctx.getWebSockets(bridge)) ws.send(JSON.stringify(frame));
  }

  private graceMs(): number {
    const configured = Number(this.env.FLEET_GRACE_MS);
    return Number.isFinite(configured) && configured > 0 ? configured : DEFAULT_GRACE_MS;
  }

  private sql<T>(query: string, ...bindings: SqlStorageValue[]): T[] {
    return this.ctx.storage.sql.exec<Row>(query, ...bindings).toArray() as T[];
  }
}
