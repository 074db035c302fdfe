import type { PublicUser } from "../core/principal";
import type { KeyGrant } from "../core/scopes";
import { RecentReads } from "./recent-reads";

/**
 * How long an isolate may answer a read (GET, HEAD, OPTIONS; never a WebSocket upgrade) with a user's
 * API key it resolved through the Keyring, without asking again: the same bound agent keys have
 * (AGENT_READ_TTL_MS). It bounds how long a revoked key, or a changed role, e-mail or name, can still
 * be seen by reads in an isolate that did not process the change; in the isolate that did, and for
 * every write everywhere (asking the Keyring, or checked in its own commit: credential-guard.ts), the
 * change takes effect on the very next request.
 */
export const USER_READ_TTL_MS = 1_000;

export interface RecentUserKey {
  user: PublicUser;
  apiKeyId: string;
  grant: KeyGrant | null;
}

/** Scripts and dashboards poll with user keys too: each read would otherwise ask the Keyring first. */
export const userKeyReads = new RecentReads<RecentUserKey>(USER_READ_TTL_MS);
