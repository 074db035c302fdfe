import { DurableObject } from "cloudflare:workers";
import { loadAgentKey, loadUserKey, loadWebSession } from "../workers/auth/key-lookups";
import type {
  AgentIdentity,
  KeyringObject,
  ResolvedAgentKey,
  ResolvedKey,
  WebSessionIdentity,
} from "../workers/auth/keyring";
import { PrincipalCache } from "../workers/auth/principal-cache";
import type { Env } from "../workers/core/env";

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
 */
export class Keyring extends DurableObject<Env> implements KeyringObject {
  private readonly users = new PrincipalCache<Omit<ResolvedKey, "touch">>();
  private readonly agents = new PrincipalCache<AgentIdentity>();
  private readonly webSessions = new PrincipalCache<WebSessionIdentity>();

  async resolve(keyHash: string): Promise<ResolvedKey | null> {
    const found = await this.users.resolve(keyHash, () => loadUserKey(this.env.DB, keyHash));
    return found && { ...found.value, touch: found.touch };
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
}
