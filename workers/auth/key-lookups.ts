import type { PublicUser } from "../core/principal";
import { grantExpired, KEY_SCOPES, type KeyGrant, type KeyScope } from "../core/scopes";
import type { AgentRole, AgentStatus, Role } from "../db/schema";
import type { AgentIdentity } from "./keyring";

/** Agents whose keys answer 401 until (or forever after) a decision. */
const LOCKED_OUT: ReadonlySet<AgentStatus> = new Set(["pending_approval", "terminated"]);

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
  scopes: string | null;
  session_id: string | null;
  company_id: string | null;
  expires_at: number | null;
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

/**
 * D1 reads behind the Keyring's caches: each answers the principal a hashed credential proves and
 * its owner (whose change invalidates it), or null.
 */
/**
 * A user's full key (`api_keys`) or one of their scoped keys (`scoped_api_keys`): the same format and
 * shard, so one lookup answers both. A scoped key past its expiry answers null, as if revoked.
 */
export async function loadUserKey(db: D1Database, keyHash: string, now = Date.now()) {
  const row = await db
    .prepare(
      `SELECT k.id AS key_id, NULL AS scopes, NULL AS session_id, NULL AS company_id, NULL AS expires_at,
              u.id, u.name, u.email, u.image, u.role
       FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = ?1
       UNION ALL
       SELECT k.id, k.scopes, k.session_id, k.company_id, k.expires_at, u.id, u.name, u.email, u.image, u.role
       FROM scoped_api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = ?1`,
    )
    .bind(keyHash)
    .first<KeyUserRow>();
  if (!row) return null;
  const grant = grantOf(row);
  if (grantExpired(grant, now)) return null;
  return { value: { user: publicUserOf(row), apiKeyId: row.key_id, grant }, ownerId: row.id };
}

/** The grant a scoped key's row carries; null for the full key (no scopes column). */
function grantOf(row: KeyUserRow): KeyGrant | null {
  if (row.scopes === null) return null;
  return {
    scopes: parseScopes(row.scopes),
    sessionId: row.session_id,
    companyId: row.company_id,
    expiresAt: row.expires_at,
  };
}

/** Stored scopes, keeping only known ones (a row never holds others; an unknown one grants nothing). */
function parseScopes(stored: string): KeyScope[] {
  const parsed: unknown = JSON.parse(stored);
  return Array.isArray(parsed) ? KEY_SCOPES.filter((scope) => parsed.includes(scope)) : [];
}

export async function loadWebSession(db: D1Database, tokenHash: string) {
  const row = await db
    .prepare(
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

export async function loadAgentKey(db: D1Database, keyHash: string) {
  const row = await db
    .prepare(
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
