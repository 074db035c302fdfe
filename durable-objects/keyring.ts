import { DurableObject } from "cloudflare:workers";
import type { Env } from "../workers/core/env";
import type { PublicUser } from "../workers/core/principal";
import type { AgentRole, AgentStatus, Role } from "../workers/db/schema";

/** `last_used_at` is a hint for humans: one write a minute per key is plenty. */
const TOUCH_INTERVAL_MS = 60_000;
/** Bounds memory per kind of key; the least recently filled entries go first. */
const MAX_ENTRIES = 10_000;
/** Agents whose keys answer 401 until (or forever after) a decision. */
const LOCKED_OUT: ReadonlySet<AgentStatus> = new Set(["pending_approval", "terminated"]);

export interface ResolvedKey {
  user: PublicUser;
  apiKeyId: string;
  /** The caller should record `last_used_at` (at most once a minute per key). */
  touch: boolean;
}

/** What an agent key proves: who the agent is, where it works, and its role for permission checks. */
export interface AgentIdentity {
  agentId: string;
  companyId: string;
  role: AgentRole;
  keyId: string;
  runId: string | null;
}

export interface ResolvedAgentKey extends AgentIdentity {
  touch: boolean;
}

/** What a web-session cookie proves. Expiry is checked by the caller on every use, cached or not. */
export interface WebSessionIdentity {
  user: PublicUser;
  sessionId: string;
  expiresAt: number;
}

interface WebSessionRow {
  session_id: string;
  expires_at: number;
  id: string;
  name: string;
  email: string;
  image: string | null;
  role: Role;
}

interface KeyUserRow {
  key_id: string;
  id: string;
  name: string;
  email: string;
  image: string | null;
  role: Role;
}

interface KeyAgentRow {
  key_id: string;
  run_id: string | null;
  id: string;
  company_id: string;
  role: AgentRole;
  status: AgentStatus;
}

/** The user columns both user lookups select, as every response shows a user. */
function publicUserOf(row: PublicUser): PublicUser {
  return { id: row.id, name: row.name, email: row.email, image: row.image, role: row.role };
}

interface Entry<T> {
  value: T;
  ownerId: string;
  lastTouchedAt: number;
}

/**
 * Key hash → principal, grouped by owner (a user or an agent) so one owner's keys can be forgotten
 * at once. A lookup that raced with an invalidation is answered but not remembered (the
 * `generation` check), so a stale row can never outlive the write that made it stale.
 */
class PrincipalCache<T> {
  private readonly byHash = new Map<string, Entry<T>>();
  private readonly hashesByOwner = new Map<string, Set<string>>();
  private generation = 0;

  async resolve(
    keyHash: string,
    load: () => Promise<{ value: T; ownerId: string } | null>,
  ): Promise<{ value: T; touch: boolean } | null> {
    const cached = this.byHash.get(keyHash);
    if (cached) return this.answer(cached);
    const generationAtRead = this.generation;
    const loaded = await load();
    if (!loaded) return null;
    const entry: Entry<T> = { ...loaded, lastTouchedAt: 0 };
    if (generationAtRead === this.generation) this.remember(keyHash, entry);
    return this.answer(entry);
  }

  invalidate(ownerId: string): void {
    this.generation++;
    for (const hash of this.hashesByOwner.get(ownerId) ?? []) this.byHash.delete(hash);
    this.hashesByOwner.delete(ownerId);
  }

  private answer(entry: Entry<T>): { value: T; touch: boolean } {
    const now = Date.now();
    const touch = now - entry.lastTouchedAt >= TOUCH_INTERVAL_MS;
    if (touch) entry.lastTouchedAt = now;
    return { value: entry.value, touch };
  }

  private remember(keyHash: string, entry: Entry<T>): void {
    if (this.byHash.size >= MAX_ENTRIES) this.evictOldest();
    this.byHash.set(keyHash, entry);
    const hashes = this.hashesByOwner.get(entry.ownerId) ?? new Set<string>();
    hashes.add(keyHash);
    this.hashesByOwner.set(entry.ownerId, hashes);
  }

  private evictOldest(): void {
    const oldest = this.byHash.keys().next();
    if (oldest.done) return;
    const entry = this.byHash.get(oldest.value);
    this.byHash.delete(oldest.value);
    if (entry) this.hashesByOwner.get(entry.ownerId)?.delete(oldest.value);
  }
}

/**
 * A read-through cache of key principals (users' API keys, agents' keys and web-session cookies), so
 * authenticating a key costs an in-memory lookup instead of a D1 query (D1 is the source of truth; this object holds
 * nothing durable).
 *
 * Each owner's keys live in exactly one shard, named by a tag embedded in the key itself, so every
 * write that changes an owner's credentials or identity (new or revoked key; a user's role or e-mail;
 * an agent's role or status; deletion) invalidates that one shard right after it commits: revocation
 * is immediate, not eventually consistent. (Isolates may answer an agent's reads for up to a second
 * from their own last answer: see workers/auth/agent-key-reads.ts.)
 */
export class Keyring extends DurableObject<Env> {
  private readonly users = new PrincipalCache<Omit<ResolvedKey, "touch">>();
  private readonly agents = new PrincipalCache<AgentIdentity>();
  private readonly webSessions = new PrincipalCache<WebSessionIdentity>();

  async resolve(keyHash: string): Promise<ResolvedKey | null> {
    const found = await this.users.resolve(keyHash, () => this.loadUserKey(keyHash));
    return found && { ...found.value, touch: found.touch };
  }

  async resolveAgent(keyHash: string): Promise<ResolvedAgentKey | null> {
    const found = await this.agents.resolve(keyHash, () => this.loadAgentKey(keyHash));
    return found && { ...found.value, touch: found.touch };
  }

  async resolveWebSession(tokenHash: string): Promise<WebSessionIdentity | null> {
    const found = await this.webSessions.resolve(tokenHash, () => this.loadWebSession(tokenHash));
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

  private async loadUserKey(keyHash: string) {
    const row = await this.env.DB.prepare(
      `SELECT k.id AS key_id, u.id, u.name, u.email, u.image, u.role
       FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = ?`,
    )
      .bind(keyHash)
      .first<KeyUserRow>();
    if (!row) return null;
    return { value: { user: publicUserOf(row), apiKeyId: row.key_id }, ownerId: row.id };
  }

  private async loadWebSession(tokenHash: string) {
    const row = await this.env.DB.prepare(
      `SELECT s.id AS session_id, s.expires_at, u.id, u.name, u.email, u.image, u.role
       FROM web_sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?`,
    )
      .bind(tokenHash)
      .first<WebSessionRow>();
    if (!row) return null;
    return {
      value: { user: publicUserOf(row), sessionId: row.session_id, expiresAt: row.expires_at },
      ownerId: row.id,
    };
  }

  private async loadAgentKey(keyHash: string) {
    const row = await this.env.DB.prepare(
      `SELECT k.id AS key_id, k.run_id, a.id, a.company_id, a.role, a.status
       FROM agent_api_keys k JOIN agents a ON a.id = k.agent_id
       WHERE k.key_hash = ? AND k.revoked_at IS NULL`,
    )
      .bind(keyHash)
      .first<KeyAgentRow>();
    if (!row || LOCKED_OUT.has(row.status)) return null;
    const identity: AgentIdentity = {
      agentId: row.id,
      companyId: row.company_id,
      role: row.role,
      keyId: row.key_id,
      runId: row.run_id,
    };
    return { value: identity, ownerId: row.id };
  }
}
