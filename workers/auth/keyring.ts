import type { Env } from "../core/env";
import { namespaceOf } from "../core/env";
import type { PublicUser } from "../core/principal";
import type { KeyGrant } from "../core/scopes";
import type { AgentRole } from "../db/schema";

export interface ResolvedKey {
  user: PublicUser;
  apiKeyId: string;
  /** A scoped key's scopes, limit and expiry; null for the user's full key. */
  grant: KeyGrant | null;
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

/** A Durable Object that holds live sockets (auth/live-sockets.ts): its namespace binding and name. */
export interface LiveHost {
  binding: "ISSUE" | "COMPANY_FEED" | "SESSION" | "MCP_SESSION";
  name: string;
  /** The company whose data its sockets carry; null for a messaging session (no company). */
  companyId: string | null;
}

/**
 * What the Worker asks of a Keyring shard (the Keyring Durable Object implements it): the principal
 * a key, agent key or web-session token proves, from memory when it can, and forgetting an owner's
 * credentials the moment they change.
 */
export interface KeyringObject extends Rpc.DurableObjectBranded {
  resolve(keyHash: string): Promise<ResolvedKey | null>;
  resolveAgent(keyHash: string): Promise<ResolvedAgentKey | null>;
  resolveWebSession(tokenHash: string): Promise<WebSessionIdentity | null>;
  /**
   * Forgets everything about a user (API key and web sessions); call after any committed change to
   * their keys, sessions (sign-out, password change) or identity.
   */
  invalidate(userId: string): Promise<void>;
  /** Forgets an agent's keys; call after any committed change to its keys, role or status. */
  invalidateAgent(agentId: string): Promise<void>;
  /**
   * Records that a socket of `ownerTag` opens in `host` (auth/live-sockets.ts); `until`, when the key
   * that opens it expires: the owner's sockets are closed then.
   */
  noteLiveHost(ownerTag: string, host: LiveHost, until?: number | null): Promise<void>;
  /**
   * The objects holding sockets of `ownerTag` (only those of `companyId` when given), forgotten as
   * they are answered: the caller is about to close those sockets.
   */
  takeLiveHosts(ownerTag: string, companyId: string | null): Promise<LiveHost[]>;
}

/** The Keyring shard named by a key's tag (user keys and agent keys share the 256 shards). */
export const keyringShard = (env: Env, tag: string): DurableObjectStub<KeyringObject> =>
  namespaceOf<KeyringObject>(env.KEYRING).getByName(`keyring-${tag}`);
