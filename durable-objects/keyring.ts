import { DurableObject } from "cloudflare:workers";
import { loadAgentKey, loadUserKey, loadWebSession } from "../workers/auth/key-lookups";
import type {
  AgentIdentity,
  KeyringObject,
  LiveHost,
  ResolvedAgentKey,
  ResolvedKey,
  WebSessionIdentity,
} from "../workers/auth/keyring";
import { KEY_EXPIRED, liveHost } from "../workers/auth/live-sockets";
import { PrincipalCache } from "../workers/auth/principal-cache";
import type { Env } from "../workers/core/env";
import { grantExpired } from "../workers/core/scopes";

/**
 * Objects remembered per owner. A dashboard page re-notes its object each time it reconnects, so only
 * an owner with more pages open at once than this could keep a socket past a revocation.
 */
const LIVE_HOSTS_KEPT = 1_000;

/**
 * A read-through cache of key principals (users' API keys, agents' keys and web-session cookies), so
 * authenticating a key costs an in-memory lookup instead of a D1 query (D1 is the source of truth; this object holds
 * nothing durable).
 *
 * Each owner's keys live in exactly one shard, named by a tag embedded in the key itself, so every
 * write that changes an owner's credentials or identity (new or revoked key; a user's role or e-mail;
 * an agent's role or status; deletion) invalidates that one shard right after it commits: revocation
 * is immediate, not eventually consistent. (Isolates may answer reads with an agent key or a user API
 * key for up to a second from their own last answer: see workers/auth/recent-reads.ts.)
 *
 * It also keeps, durably, where each of its owners' live sockets are (`live_hosts`), so a revocation
 * can close them: see workers/auth/live-sockets.ts.
 */
export class Keyring extends DurableObject<Env> implements KeyringObject {
  private readonly users = new PrincipalCache<Omit<ResolvedKey, "touch">>();
  private readonly agents = new PrincipalCache<AgentIdentity>();
  private readonly webSessions = new PrincipalCache<WebSessionIdentity>();

  async resolve(keyHash: string): Promise<ResolvedKey | null> {
    const found = await this.users.resolve(keyHash, () => loadUserKey(this.env.DB, keyHash));
    // A scoped key's expiry is checked on every use, cached or not: access ends when it ends.
    if (!found || grantExpired(found.value.grant)) return null;
    return { ...found.value, touch: found.touch };
  }

  async resolveAgent(keyHash: string): Promise<ResolvedAgentKey | null> {
    const found = await this.agents.resolve(keyHash, () => loadAgentKey(this.env.DB, keyHash));
    return found && { ...found.value, touch: found.touch };
  }

  async resolveWebSession(tokenHash: string): Promise<WebSessionIdentity | null> {
    const found = await this.webSessions.resolve(tokenHash, () => loadWebSession(this.env.DB, tokenHash));
    return found?.value ?? null;
  }

  /**
   * Forgets everything about a user (API key and web sessions); call after any committed change to
   * their keys, sessions (sign-out, password change) or identity.
   */
  async invalidate(userId: string): Promise<void> {
    this.users.invalidate(userId);
    this.webSessions.invalidate(userId);
  }

  /** Forgets an agent's keys; call after any committed change to its keys, role or status. */
  async invalidateAgent(agentId: string): Promise<void> {
    this.agents.invalidate(agentId);
  }

  async noteLiveHost(ownerTag: string, host: LiveHost, until: number | null = null): Promise<void> {
    if (until !== null) await this.#cutAt(ownerTag, until);
    this.#liveHosts().exec(
      `INSERT INTO live_hosts (owner, binding, name, company_id, noted_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (owner, binding, name) DO UPDATE SET noted_at = excluded.noted_at`,
      ownerTag,
      host.binding,
      host.name,
      host.companyId,
      Date.now(),
    );
    // Rows are dropped when a cut takes them, not when their socket closes: keep each owner's newest.
    this.#liveHosts().exec(
      `DELETE FROM live_hosts WHERE owner = ? AND rowid NOT IN
         (SELECT rowid FROM live_hosts WHERE owner = ? ORDER BY noted_at DESC LIMIT ?)`,
      ownerTag,
      ownerTag,
      LIVE_HOSTS_KEPT,
    );
  }

  async takeLiveHosts(ownerTag: string, companyId: string | null): Promise<LiveHost[]> {
    const where = "owner = ? AND (? IS NULL OR company_id = ?)";
    const sql = this.#liveHosts();
    const hosts = sql
      .exec<{ binding: LiveHost["binding"]; name: string; company_id: string | null }>(
        `SELECT binding, name, company_id FROM live_hosts WHERE ${where}`,
        ownerTag,
        companyId,
        companyId,
      )
      .toArray()
      .map((row) => ({ binding: row.binding, name: row.name, companyId: row.company_id }));
    sql.exec(`DELETE FROM live_hosts WHERE ${where}`, ownerTag, companyId, companyId);
    return hosts;
  }

  /**
   * A scoped key's expiry ends the sockets it opened when it comes, not when they next ask: the owner's
   * sockets are closed at `until` (as a revocation closes them), by this object's alarm.
   */
  async #cutAt(ownerTag: string, until: number): Promise<void> {
    this.#liveHosts().exec(
      "INSERT OR IGNORE INTO live_deadlines (owner, cut_at) VALUES (?, ?)",
      ownerTag,
      until,
    );
    const current = await this.ctx.storage.getAlarm();
    if (current === null || until < current) await this.ctx.storage.setAlarm(until);
  }

  override async alarm(): Promise<void> {
    const sql = this.#liveHosts();
    const now = Date.now();
    const due = sql
      .exec<{ owner: string }>("SELECT DISTINCT owner FROM live_deadlines WHERE cut_at <= ?", now)
      .toArray();
    sql.exec("DELETE FROM live_deadlines WHERE cut_at <= ?", now);
    for (const { owner } of due) {
      const hosts = await this.takeLiveHosts(owner, null);
      await Promise.all(
        hosts.map((host) =>
          liveHost(this.env, host)
            .cutSockets(owner, KEY_EXPIRED.code, KEY_EXPIRED.reason)
            .catch((error: unknown) =>
              console.error(
                JSON.stringify({ level: "error", msg: "expiry cut failed", host, error: String(error) }),
              ),
            ),
        ),
      );
    }
    const next = sql.exec<{ at: number | null }>("SELECT min(cut_at) AS at FROM live_deadlines").one().at;
    if (next !== null) await this.ctx.storage.setAlarm(next);
  }

  #liveHostsReady = false;

  #liveHosts(): SqlStorage {
    const sql = this.ctx.storage.sql;
    if (!this.#liveHostsReady) {
      sql.exec(
        `CREATE TABLE IF NOT EXISTS live_hosts (owner TEXT NOT NULL, binding TEXT NOT NULL, name TEXT NOT NULL,
           company_id TEXT, noted_at INTEGER NOT NULL, PRIMARY KEY (owner, binding, name))`,
      );
      sql.exec(
        `CREATE TABLE IF NOT EXISTS live_deadlines (owner TEXT NOT NULL, cut_at INTEGER NOT NULL,
           PRIMARY KEY (owner, cut_at))`,
      );
      this.#liveHostsReady = true;
    }
    return sql;
  }
}
