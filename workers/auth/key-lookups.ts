import type { PublicUser } from "../core/principal";
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
export async function loadUserKey(db: D1Database, keyHash: string) {
  const row = await db
    .prepare(
      `SELECT k.id AS key_id, u.id, u.name, u.email, u.image, u.role
       FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = ?`,
    )
    .bind(keyHash)
    .first<KeyUserRow>();
  if (!row) return null;
  return { value: { user: publicUserOf(row), apiKeyId: row.key_id }, ownerId: row.id };
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
