import { open } from "../../workers/auth/secret-box";
import type { Env } from "../../workers/core/env";

/**
 * The session's proxy at rest in its Durable Object: the URL sealed under SECRETS_MASTER_KEY and bound
 * to the session (the Worker seals it; a box copied onto another session never opens), plus the form
 * that may be shown (`scheme://host:port`, no credentials). Opened only to hand it to the lease holder
 * in `welcome` and `start`: nothing stored or logged holds the URL in the clear.
 */
export interface StoredProxy {
  sealed: string;
  shown: string;
}

export const proxyOwner = (sessionId: string) => `proxy:${sessionId}`;

const SCHEMA =
  "CREATE TABLE IF NOT EXISTS proxy (k INTEGER PRIMARY KEY CHECK (k = 1), sealed TEXT NOT NULL, shown TEXT NOT NULL)";

export class SessionProxy {
  constructor(
    private readonly sql: SqlStorage,
    private readonly env: Env,
  ) {
    sql.exec(SCHEMA);
  }

  save(proxy: StoredProxy | null): void {
    if (proxy === null) this.sql.exec("DELETE FROM proxy");
    else
      this.sql.exec(
        "INSERT OR REPLACE INTO proxy (k, sealed, shown) VALUES (1, ?, ?)",
        proxy.sealed,
        proxy.shown,
      );
  }

  shown(): string | null {
    const row = this.sql.exec<{ shown: string }>("SELECT shown FROM proxy WHERE k = 1").toArray()[0];
    return row?.shown ?? null;
  }

  /**
   * What the bridge gets: the URL, or none. When the box no longer opens (the master key changed),
   * null after `fail` is told why: connecting without the proxy would show WhatsApp the very address
   * it is there to hide.
   */
  async forBridge(
    sessionId: string,
    fail: (why: string) => Promise<void>,
  ): Promise<{ proxy: string | null } | null> {
    const row = this.sql
      .exec<{ sealed: string; shown: string }>("SELECT sealed, shown FROM proxy WHERE k = 1")
      .toArray()[0];
    if (!row) return { proxy: null };
    try {
      return { proxy: await open(this.env.SECRETS_MASTER_KEY, row.sealed, proxyOwner(sessionId)) };
    } catch {
      await fail(
        `The session's proxy (${row.shown}) could not be decrypted (SECRETS_MASTER_KEY changed?): set it again`,
      );
      return null;
    }
  }
}
