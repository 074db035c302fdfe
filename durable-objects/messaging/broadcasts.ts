import type { TimedWork } from "./context";

/** Broadcast jobs (placeholder until implemented). */
export const BROADCASTS_SCHEMA: readonly string[] = [];
export const broadcastsApi = {};
export const broadcastWork: TimedWork = { next: () => null, run: async () => {} };
