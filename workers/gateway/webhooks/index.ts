/**
 * Webhooks of a session or of all of an owner's sessions: configuration, the event catalogue and the
 * delivery log. HTTP in routes.ts.
 *
 * This index is what the rest of the code may import from here.
 */
export { documentWebhookEvents } from "./events";
export { sealLegacyWebhookSecrets } from "./legacy-secrets";
export { ALL_EVENTS, type CreatedWebhookSchema, type DeliverySchema, type WebhookSchema } from "./schemas";
