import { and, eq, isNotNull, sql } from "drizzle-orm";
import { seal } from "../../auth/secret-box";
import type { Env } from "../../core/env";
import { database } from "../../db/client";
import { botConfigs } from "../../db/schema";
import { pushSessionConfig } from "./call";

/**
 * The bot's remove.bg API key at rest: a third party's credential, so it is sealed (AES-256-GCM under
 * SECRETS_MASTER_KEY, the box company secrets and webhook secrets use), bound to its session, and
 * never answered back (responses say only whether one is set). The service does not call remove.bg
 * yet, so nothing opens it; the session's Durable Object never receives it.
 *
 * Keys saved before sealing are plaintext in the same column. SQL cannot encrypt, so the every-minute
 * cron seals them a batch at a time. A sealed value is `v1.<iv b64>.<ciphertext b64>`; a real
 * remove.bg key (letters and digits) never has that shape, so the shape tells the two apart.
 */

const SEALED = /^v1\.[A-Za-z0-9+/]+=*\.[A-Za-z0-9+/]+=*$/;

export const isSealedRemoveBgKey = (stored: string): boolean => SEALED.test(stored);

/** Binds the box to the session, so a ciphertext copied onto another row never opens. */
export const removeBgKeyOwner = (sessionId: string) => `remove-bg:${sessionId}`;

/** Seals a key for `sessionId`; a deployment without SECRETS_MASTER_KEY gets a 503. */
export function sealRemoveBgKey(
  masterKey: string | undefined,
  sessionId: string,
  key: string,
): Promise<string> {
  return seal(masterKey, key, removeBgKeyOwner(sessionId));
}

export const LEGACY_KEY_BATCH = 100;

/**
 * Seals up to `limit` plaintext keys; returns how many. Each sealed session's object gets its config
 * again, replacing a copy from before, which held the key. Without SECRETS_MASTER_KEY it does nothing.
 */
export async function sealLegacyRemoveBgKeys(env: Env, limit = LEGACY_KEY_BATCH): Promise<number> {
  if (!env.SECRETS_MASTER_KEY) return 0;
  try {
    const db = database(env.DB);
    // Roughly the sealed shape in SQL (so sealed rows are not read every minute); exactly, below.
    const candidates = await db
      .select({ sessionId: botConfigs.sessionId, key: botConfigs.removeBgApiKey })
      .from(botConfigs)
      .where(
        and(
          isNotNull(botConfigs.removeBgApiKey),
          sql`NOT (${botConfigs.removeBgApiKey} GLOB 'v1.?*.?*' AND ${botConfigs.removeBgApiKey} NOT GLOB '*[^A-Za-z0-9+/=.]*')`,
        ),
      )
      .limit(limit);
    const legacy = candidates.filter(
      (row): row is { sessionId: string; key: string } => row.key !== null && !isSealedRemoveBgKey(row.key),
    );
    let sealed = 0;
    for (const row of legacy) {
      const [updated] = await db
        .update(botConfigs)
        .set({ removeBgApiKey: await sealRemoveBgKey(env.SECRETS_MASTER_KEY, row.sessionId, row.key) })
        // Only if it still holds the plaintext that was read: a new key written meanwhile wins.
        .where(and(eq(botConfigs.sessionId, row.sessionId), eq(botConfigs.removeBgApiKey, row.key)))
        .returning({ sessionId: botConfigs.sessionId });
      if (!updated) continue;
      sealed++;
      await pushSessionConfig(env, row.sessionId).catch((error: unknown) =>
        console.error(
          JSON.stringify({ msg: "sealed remove.bg key: config not pushed", error: String(error) }),
        ),
      );
    }
    return sealed;
  } catch (error) {
    // Housekeeping: the next minute tries again, and the cron's other work must not stop for it.
    console.error(JSON.stringify({ msg: "remove.bg keys not sealed", error: String(error) }));
    return 0;
  }
}
