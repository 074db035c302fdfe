import { open, seal } from "../auth/secret-box";

/**
 * Webhook signing secrets at rest. A secret must be usable for HMAC again, so it is sealed (the same
 * AES-256-GCM box as company secrets, under SECRETS_MASTER_KEY) rather than hashed, in D1 and in the
 * SessionDOs' endpoint copies alike; it is opened only to sign an attempt. Rows from before sealing
 * (`secretSealed` false) still hold plaintext until the cron seals them (gateway/webhooks/legacy-secrets.ts).
 */

/** What a stored secret needs to be opened: the row it belongs to and whether it is sealed. */
export interface StoredWebhookSecret {
  id: string;
  secret: string;
  secretSealed: boolean;
}

/** Binds the box to its webhook, so a ciphertext copied onto another row (or kind of secret) never opens. */
const ownerOf = (webhookId: string) => `webhook:${webhookId}`;

/** Seals a plaintext secret for `webhookId`; a deployment without SECRETS_MASTER_KEY gets a 503. */
export function sealWebhookSecret(
  masterKey: string | undefined,
  webhookId: string,
  plaintext: string,
): Promise<string> {
  return seal(masterKey, plaintext, ownerOf(webhookId));
}

/** The plaintext secret: opened when sealed, as stored when the row predates sealing. */
export async function openWebhookSecret(
  masterKey: string | undefined,
  stored: StoredWebhookSecret,
): Promise<string> {
  return stored.secretSealed ? open(masterKey, stored.secret, ownerOf(stored.id)) : stored.secret;
}

/** Why a secret could not be opened, for a delivery log or a test result (never the secret itself). */
export function unopenedReason(error: unknown): string {
  const detail = error instanceof Error ? error.message : String(error);
  return `signing secret could not be opened (is SECRETS_MASTER_KEY the key it was sealed with?): ${detail}`;
}
