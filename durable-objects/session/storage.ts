import type { AuthState, LifecycleEvent, Me, WaVersionInfo } from "../../bridge/src/protocol/link";
import type { SessionState } from "../../workers/db/schema";

/**
 * The SessionDO's own SQLite: one row of session state, the Baileys auth state (creds and signal
 * keys) and the applied-event cursor. All access is synchronous (`ctx.storage.sql`), so a
 * read-check-write here never lets another request interleave.
 */

export interface SessionRecord {
  sessionId: string | null;
  desired: "running" | "stopped";
  state: SessionState;
  qr: string | null;
  qrImage: string | null;
  me: Me | null;
  connectedAt: number | null;
  /** Why the session last left `connected` (close code and reason), for humans. */
  lastDisconnect: string | null;
  leaseBridge: string | null;
  leaseEpoch: number;
  /** Highest event seq applied in the current epoch. */
  lastSeq: number;
  /** A fleet assignment has been requested and not yet answered: further starts must not ask again. */
  assigning: boolean;
  /** State before the bridge link dropped, restored when the same lease reconnects. */
  stateBeforeLinkLoss: SessionState | null;
  /** The WhatsApp Web version that last connected, and its source; the bridge's fallback offline. */
  waVersion: WaVersionInfo | null;
}

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS session (
     k INTEGER PRIMARY KEY CHECK (k = 1),
     session_id TEXT, desired TEXT NOT NULL, state TEXT NOT NULL, qr TEXT, qr_image TEXT, me TEXT,
     connected_at INTEGER, last_disconnect TEXT, lease_bridge TEXT, lease_epoch INTEGER NOT NULL,
     last_seq INTEGER NOT NULL, assigning INTEGER NOT NULL, state_before_link_loss TEXT)`,
  `INSERT OR IGNORE INTO session (k, desired, state, lease_epoch, last_seq, assigning)
     VALUES (1, 'stopped', 'stopped', 0, 0, 0)`,
  "CREATE TABLE IF NOT EXISTS auth_creds (k INTEGER PRIMARY KEY CHECK (k = 1), value TEXT NOT NULL)",
  "CREATE TABLE IF NOT EXISTS auth_keys (id TEXT PRIMARY KEY, value TEXT NOT NULL)",
  // Beside the session row (older objects have that row already): written only when a socket connects.
  "CREATE TABLE IF NOT EXISTS wa_version (k INTEGER PRIMARY KEY CHECK (k = 1), value TEXT NOT NULL)",
];

type Row = Record<string, SqlStorageValue>;

const text = (value: SqlStorageValue): string | null => (typeof value === "string" ? value : null);
const num = (value: SqlStorageValue): number => (typeof value === "number" ? value : 0);

export class SessionStorage {
  constructor(private readonly sql: SqlStorage) {
    for (const statement of SCHEMA) sql.exec(statement);
  }

  read(): SessionRecord {
    const row = this.sql.exec<Row>("SELECT * FROM session WHERE k = 1").one();
    const me = text(row.me ?? null);
    return {
      sessionId: text(row.session_id ?? null),
      desired: row.desired === "running" ? "running" : "stopped",
      state: (text(row.state ?? null) ?? "stopped") as SessionState,
      qr: text(row.qr ?? null),
      qrImage: text(row.qr_image ?? null),
      me: me ? (JSON.parse(me) as Me) : null,
      connectedAt: typeof row.connected_at === "number" ? row.connected_at : null,
      lastDisconnect: text(row.last_disconnect ?? null),
      leaseBridge: text(row.lease_bridge ?? null),
      leaseEpoch: num(row.lease_epoch ?? 0),
      lastSeq: num(row.last_seq ?? 0),
      assigning: num(row.assigning ?? 0) === 1,
      stateBeforeLinkLoss: text(row.state_before_link_loss ?? null) as SessionState | null,
      waVersion: this.readWaVersion(),
    };
  }

  private readWaVersion(): WaVersionInfo | null {
    const row = this.sql.exec<Row>("SELECT value FROM wa_version WHERE k = 1").toArray()[0];
    return row ? (JSON.parse(String(row.value)) as WaVersionInfo) : null;
  }

  /** What a lifecycle event carries beside the state: auth writes, the version a socket connected with. */
  keepFrom(event: LifecycleEvent): void {
    if (event.kind === "auth") this.writeAuth(event.creds, event.keys);
    if (event.kind === "connected" && event.waVersion)
      this.sql.exec(
        "INSERT OR REPLACE INTO wa_version (k, value) VALUES (1, ?)",
        JSON.stringify(event.waVersion),
      );
  }

  write(patch: Partial<Omit<SessionRecord, "waVersion">>): void {
    const columns: Record<keyof Omit<SessionRecord, "waVersion">, string> = {
      sessionId: "session_id",
      desired: "desired",
      state: "state",
      qr: "qr",
      qrImage: "qr_image",
      me: "me",
      connectedAt: "connected_at",
      lastDisconnect: "last_disconnect",
      leaseBridge: "lease_bridge",
      leaseEpoch: "lease_epoch",
      lastSeq: "last_seq",
      assigning: "assigning",
      stateBeforeLinkLoss: "state_before_link_loss",
    };
    type Column = keyof Omit<SessionRecord, "waVersion">;
    const entries = Object.entries(patch) as [Column, SessionRecord[Column]][];
    if (entries.length === 0) return;
    const assignments = entries.map(([key]) => `${columns[key]} = ?`).join(", ");
    const values = entries.map(([key, value]) => {
      if (key === "me") return value === null ? null : JSON.stringify(value);
      if (typeof value === "boolean") return value ? 1 : 0;
      return value as SqlStorageValue;
    });
    this.sql.exec(`UPDATE session SET ${assignments} WHERE k = 1`, ...values);
  }

  readAuth(): AuthState {
    const creds = this.sql.exec<Row>("SELECT value FROM auth_creds WHERE k = 1").toArray()[0];
    const keys: AuthState["keys"] = {};
    for (const row of this.sql.exec<Row>("SELECT id, value FROM auth_keys")) {
      keys[String(row.id)] = JSON.parse(String(row.value));
    }
    return { creds: creds ? JSON.parse(String(creds.value)) : null, keys };
  }

  hasCreds(): boolean {
    return this.sql.exec("SELECT 1 FROM auth_creds WHERE k = 1").toArray().length > 0;
  }

  /** Applies an auth write-through event; `null` deletes. Synchronous, so it commits atomically. */
  writeAuth(creds: unknown | null | undefined, keys: Record<string, unknown | null> | undefined): void {
    if (creds === null) this.sql.exec("DELETE FROM auth_creds");
    else if (creds !== undefined) {
      this.sql.exec("INSERT OR REPLACE INTO auth_creds (k, value) VALUES (1, ?)", JSON.stringify(creds));
    }
    for (const [id, value] of Object.entries(keys ?? {})) {
      if (value === null) this.sql.exec("DELETE FROM auth_keys WHERE id = ?", id);
      else
        this.sql.exec(
          "INSERT OR REPLACE INTO auth_keys (id, value) VALUES (?, ?)",
          id,
          JSON.stringify(value),
        );
    }
  }

  clearAuth(): void {
    this.sql.exec("DELETE FROM auth_creds");
    this.sql.exec("DELETE FROM auth_keys");
  }
}
