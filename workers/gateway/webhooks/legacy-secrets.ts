import { and, eq } from "drizzle-orm";
import type { Env } from "../../core/env";
import { database } from "../../db/client";
import { type WebhookRow, webhooks } from "../../db/schema";
import { sealWebhookSecret } from "../../webhooks/secrets";
import { pushAfterChange } from "../sessions";

/**
 * Seals the webhook secrets stored in plaintext before migration 0010 (SQL cannot encrypt, so the
 * migration only marks them). The every-minute cron runs it: a batch at a time, so a large directory
 * is sealed over a few minutes, while deliveries keep reading such rows as plaintext meanwhile.
 */

export const LEGACY_BATCH = 100;

/** The new secret, only if the row still holds the plaintext that was read (a rotation wins). */
async function sealRow(env: Env, row: WebhookRow): Promise<WebhookRow | undefined> {
  const sealed = await sealWebhookSecret(env.SECRETS_MASTER_KEY, row.id, row.secret);
  const [updated] = await database(env.DB)
    .update(webhooks)
    .set({ secret: sealed, secretSealed: true })
    .where(and(eq(webhooks.id, row.id), eq(webhooks.secret, row.secret), eq(webhooks.secretSealed, false)))
    .returning();
  return updated;
}

/** The objects' endpoint copies still hold the plaintext: each session (or owner) concerned gets a push. */
async function pushSealed(env: Env, rows: readonly WebhookRow[]): Promise<void> {
  const concerned = new Map(rows.map((row) => [row.sessionId ?? `owner:${row.userId}`, row]));
  const pushes = await Promise.allSettled([...concerned.values()].map((row) => pushAfterChange(env, row)));
  for (const push of pushes)
    if (push.status === "rejected")
      // The copy is replaced again by the webhook's next change; D1 is sealed either way.
      console.error(JSON.stringify({ msg: "sealed webhook secret not pushed", error: String(push.reason) }));
}

/** Seals up to `limit` plaintext secrets; returns how many. Without SECRETS_MASTER_KEY it does nothing. */
export async function sealLegacyWebhookSecrets(env: Env, limit = LEGACY_BATCH): Promise<number> {
  if (!env.SECRETS_MASTER_KEY) return 0;
  try {
    const legacy = await database(env.DB)
      .select()
      .from(webhooks)
      .where(eq(webhooks.secretSealed, false))
      .limit(limit);
    const sealed: WebhookRow[] = [];
    for (const row of legacy) {
      const updated = await sealRow(env, row);
      if (updated) sealed.push(updated);
    }
    await pushSealed(env, sealed);
    return sealed.length;
  } catch (error) {
    // Housekeeping: the next minute tries again, and the cron's other work must not stop for it.
    console.error(JSON.stringify({ msg: "webhook secrets not sealed", error: String(error) }));
    return 0;
  }
}
