-- Webhook signing secrets are sealed (AES-256-GCM under SECRETS_MASTER_KEY) from now on. SQL cannot
-- encrypt, so existing rows keep their plaintext and are marked unsealed (the default); the Worker's
-- every-minute cron seals them in batches and pushes the sealed copies to the sessions' objects.
ALTER TABLE `webhooks` ADD `secret_sealed` integer DEFAULT false NOT NULL;
