import type { SessionCredential } from "../../workers/mcp/session-object";

/** What a session object keeps of its session (never the key: its fingerprint). */
export interface SessionRecord extends SessionCredential {
  sessionId: string;
  /** The protocol version agreed at initialize. */
  protocolVersion: string;
  /** The client's `clientInfo` (name, version), as JSON. */
  clientInfo: string;
  /** The initialize request's JSON, replayed into a fresh SDK transport after the object was evicted. */
  initialize: string;
  createdAt: number;
  lastUsedAt: number;
}

interface Row extends Record<string, SqlStorageValue> {
  session_id: string;
  fingerprint: string;
  owner_tag: string;
  company_id: string | null;
  protocol_version: string;
  client_info: string;
  initialize: string;
  created_at: number;
  last_used_at: number;
}

/** The one row of the session, in the object's SQLite. */
export class SessionRecords {
  #ready = false;

  constructor(private readonly sql: SqlStorage) {}

  read(): SessionRecord | null {
    const row = this.#table().exec<Row>("SELECT * FROM mcp_session LIMIT 1").toArray()[0];
    if (row === undefined) return null;
    return {
      sessionId: row.session_id,
      fingerprint: row.fingerprint,
      ownerTag: row.owner_tag,
      companyId: row.company_id,
      protocolVersion: row.protocol_version,
      clientInfo: row.client_info,
      initialize: row.initialize,
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at,
    };
  }

  create(record: SessionRecord): void {
    this.#table().exec(
      `INSERT INTO mcp_session (session_id, fingerprint, owner_tag, company_id, protocol_version, client_info,
         initialize, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      record.sessionId,
      record.fingerprint,
      record.ownerTag,
      record.companyId,
      record.protocolVersion,
      record.clientInfo,
      record.initialize,
      record.createdAt,
      record.lastUsedAt,
    );
  }

  touch(at: number): void {
    this.#table().exec("UPDATE mcp_session SET last_used_at = ?", at);
  }

  erase(): void {
    this.#table().exec("DELETE FROM mcp_session");
  }

  #table(): SqlStorage {
    if (!this.#ready) {
      this.sql.exec(
        `CREATE TABLE IF NOT EXISTS mcp_session (session_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL,
           owner_tag TEXT NOT NULL, company_id TEXT, protocol_version TEXT NOT NULL, client_info TEXT NOT NULL,
           initialize TEXT NOT NULL, created_at INTEGER NOT NULL, last_used_at INTEGER NOT NULL)`,
      );
      this.#ready = true;
    }
    return this.sql;
  }
}
