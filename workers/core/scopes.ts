/**
 * What a key may do (issue 27's scoped keys), one definition for REST and MCP: `read` reads anything
 * the key reaches; `send` sends WhatsApp messages; `control` changes the control plane (issues,
 * comments, approvals, documents, agents' work); `admin` does everything else (sessions, keys,
 * members, webhooks, settings). Which request needs which: auth/key-scopes.ts; which tool: its `scope`.
 */
export const KEY_SCOPES = ["read", "send", "control", "admin"] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/**
 * What a scoped key allows, carried on the principal it proves. The user's own full key and a cookie
 * carry none (`null`): everything their user may do.
 */
export interface KeyGrant {
  scopes: readonly KeyScope[];
  /** The one messaging session (internal id) the key reaches, or null. */
  sessionId: string | null;
  /** The one company the key reaches, or null. */
  companyId: string | null;
  /** When the key stops working (ms since the epoch), or null. */
  expiresAt: number | null;
}

/** Whether the grant allows `scope` (admin allows everything; no grant is a full key). */
export const grantAllows = (grant: KeyGrant | null, scope: KeyScope): boolean =>
  grant === null || grant.scopes.includes("admin") || grant.scopes.includes(scope);

/** A grant whose expiry has passed: the key answers 401 as if revoked. */
export const grantExpired = (grant: KeyGrant | null, now = Date.now()): boolean =>
  grant?.expiresAt != null && grant.expiresAt <= now;
