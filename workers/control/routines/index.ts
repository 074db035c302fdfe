/**
 * Routines: triggers (schedule, webhook, manual), their runs, and the schedule tick the cron fires.
 * HTTP in routes.ts.
 *
 * This index is what the rest of the code may import from here.
 */
export { firstTick, parseSchedule } from "./cron";
export { fireDueSchedules } from "./scheduler";
export {
  CreateTriggerBodySchema,
  DEFAULT_REPLAY_WINDOW_SEC,
  type RoutineDetailSchema,
  type RoutineRunSchema,
  type RoutineSchema,
  type TriggerWithSecretSchema,
} from "./schemas";
