import type { TimedWork } from "./context";

/** Webhook fan-out and delivery from the outbox (placeholder until implemented). */
export const WEBHOOK_SCHEMA: readonly string[] = [];
export const webhooksApi = {};
export const webhookWork: TimedWork = { next: () => null, run: async () => {} };
