import type { TimedWork } from "./context";

/** Scheduled messages (placeholder until implemented). */
export const SCHEDULER_SCHEMA: readonly string[] = [];
export const schedulerApi = {};
export const scheduledWork: TimedWork = { next: () => null, run: async () => {} };
