/**
 * Messaging sessions: the directory in D1, who may use a session, settings and bot config, and calls
 * into the session's Durable Object. HTTP in routes.ts, sharing.ts, bot-config.ts, simulator.ts.
 *
 * This index is what the rest of the code may import from here.
 */
export { accessibleSession, callSession } from "./call";
export { sealLegacyRemoveBgKeys } from "./remove-bg-key";
export type {
  BotConfigSchema,
  MeResourceSchema,
  QrSchema,
  SessionDetailSchema,
  SessionSchema,
  SessionSettingsSchema,
  WebhookSummary,
} from "./schemas";
export { SessionLimitsSchema } from "./schemas";
export { loadAccessibleSession } from "./store";
export {
  concerning,
  endpointsOf,
  pushAfterChange,
  pushOwnerWebhooks,
  pushWebhooks,
} from "./webhook-endpoints";
export { managesGlobal } from "./webhook-summaries";
