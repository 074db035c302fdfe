import { and, asc, eq, isNotNull, isNull, lt, or } from "drizzle-orm";
import type { FleetSnapshot } from "../../../durable-objects/fleet/contract";
import { sha256Hex, timingSafeEqual } from "../../auth/crypto";
import { bridgeTokens } from "../../auth/prefixed-token";
import { type Db, iso } from "../../db/client";
import { type BridgeCredentialRow, bridgeCredentials } from "../../db/schema";

/**
 * The bridge `npm start` runs locally. `BRIDGE_TOKEN` opens the bridge link as this id and no other:
 * a development deployment needs no credential created first, and nothing else can use that token.
 */
export const BOOTSTRAP_BRIDGE_ID = "local-bridge";

/** A bridge id as BRIDGE_ID spells it; also a WebSocket tag and a query value. */
export const BRIDGE_ID_PATTERN = /^[\w.:-]{1,64}$/;

/**
 * The bridge a presented credential belongs to, or null. A well-formed `swbr_` token is looked up by
 * its digest (never revoked); anything else can only be the bootstrap `BRIDGE_TOKEN`.
 */
export async function bridgeForCredential(
  db: Db,
  presented: string,
  bootstrapToken: string | undefined,
): Promise<string | null> {
  if (bridgeTokens.isWellFormed(presented)) {
    const row = await db
      .select({ id: bridgeCredentials.id })
      .from(bridgeCredentials)
      .where(
        and(eq(bridgeCredentials.tokenHash, await sha256Hex(presented)), isNull(bridgeCredentials.revokedAt)),
      )
      .get();
    return row?.id ?? null;
  }
  if (bootstrapToken && (await timingSafeEqual(presented, bootstrapToken))) return BOOTSTRAP_BRIDGE_ID;
  return null;
}

/** `last_used_at` is for people reading the list: once a minute is enough. */
const TOUCH_INTERVAL_MS = 60_000;

/** Conditional, so a bridge dialling a thousand sessions at once writes the row once. */
export async function touchCredential(db: Db, id: string, now = Date.now()): Promise<void> {
  await db
    .update(bridgeCredentials)
    .set({ lastUsedAt: now })
    .where(
      and(
        eq(bridgeCredentials.id, id),
        isNull(bridgeCredentials.revokedAt),
        or(isNull(bridgeCredentials.lastUsedAt), lt(bridgeCredentials.lastUsedAt, now - TOUCH_INTERVAL_MS)),
      ),
    );
}

export const activeCredential = (db: Db, id: string) =>
  db
    .select()
    .from(bridgeCredentials)
    .where(and(eq(bridgeCredentials.id, id), isNull(bridgeCredentials.revokedAt)))
    .get();

/** Revoked credentials stay listed (who, when) until the id is given a new one. */
export const listCredentials = (db: Db) =>
  db.select().from(bridgeCredentials).orderBy(asc(bridgeCredentials.createdAt));

/**
 * A credential for `id`; the row of an earlier revoked credential is replaced (the id is the key).
 * Null when the id already has an active one.
 */
export async function createCredential(
  db: Db,
  id: string,
  createdByUserId: string,
  now = Date.now(),
): Promise<{ row: BridgeCredentialRow; token: string } | null> {
  const generated = await bridgeTokens.generate();
  const row: BridgeCredentialRow = {
    id,
    tokenHash: generated.hash,
    tokenPrefix: generated.prefix,
    createdByUserId,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
  };
  // One statement decides: two operators creating the same id at once get one credential between them.
  const written = await db
    .insert(bridgeCredentials)
    .values(row)
    .onConflictDoUpdate({
      target: bridgeCredentials.id,
      set: row,
      setWhere: isNotNull(bridgeCredentials.revokedAt),
    })
    .returning({ id: bridgeCredentials.id });
  return written.length > 0 ? { row, token: generated.token } : null;
}

/** True when an active credential was revoked just now. */
export async function revokeCredential(db: Db, id: string, now = Date.now()): Promise<boolean> {
  const revoked = await db
    .update(bridgeCredentials)
    .set({ revokedAt: now })
    .where(and(eq(bridgeCredentials.id, id), isNull(bridgeCredentials.revokedAt)))
    .returning({ id: bridgeCredentials.id });
  return revoked.length > 0;
}

export interface BridgeResource {
  id: string;
  tokenPrefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  connected: boolean;
  sessions: number;
}

export function toBridgeResource(row: BridgeCredentialRow, fleet: FleetSnapshot): BridgeResource {
  const live = fleet.bridges.find((bridge) => bridge.id === row.id);
  return {
    id: row.id,
    tokenPrefix: row.tokenPrefix,
    createdAt: iso(row.createdAt),
    lastUsedAt: row.lastUsedAt === null ? null : iso(row.lastUsedAt),
    revokedAt: row.revokedAt === null ? null : iso(row.revokedAt),
    connected: row.revokedAt === null && (live?.connected ?? false),
    sessions: row.revokedAt === null ? (live?.sessions ?? 0) : 0,
  };
}
