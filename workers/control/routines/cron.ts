import { Cron } from "croner";
import { unprocessable } from "../../http/errors";

/**
 * Schedule triggers: 5-field cron expressions in an IANA time zone, evaluated with `croner`
 * (standard semantics: day of week 0–6 with Sunday = 0, day-of-month OR day-of-week when both are
 * restricted). Times are whole minutes in ms since the epoch.
 */

/** How many missed ticks `enqueue_missed_with_cap` fires after downtime, at most. */
export const CATCH_UP_CAP = 25;
const HOUR_MS = 60 * 60 * 1000;
/** Ticks sampled to decide whether a cron fires more than once an hour (see isSubHourly). */
const SUB_HOURLY_SAMPLE = 48;

/** Whether the runtime knows the zone (Intl throws a RangeError for unknown names). */
export function isValidTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The parsed schedule, or a 422 naming what is wrong. Only plain 5-field expressions: nicknames
 * (`@daily`) and seconds/years fields are refused so every stored schedule reads the same.
 */
export function parseSchedule(cronExpression: string, timezone: string): Cron {
  if (!isValidTimeZone(timezone))
    throw unprocessable(`timezone: unknown IANA time zone '${timezone}'`, { field: "timezone" });
  const fields = cronExpression.trim().split(/\s+/);
  if (fields.length !== 5)
    throw unprocessable(
      `cronExpression: exactly 5 fields are required (minute hour day-of-month month day-of-week), got ${fields.length}`,
      { field: "cronExpression" },
    );
  try {
    return new Cron(fields.join(" "), { timezone, mode: "5-part" });
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^CronPattern:\s*/, "") : String(error);
    throw unprocessable(`cronExpression: ${reason}`, { field: "cronExpression" });
  }
}

/** The first tick strictly after `afterMs`, or null when the expression never fires again. */
export function nextTick(cron: Cron, afterMs: number): number | null {
  const next = cron.nextRun(new Date(afterMs));
  return next ? next.getTime() : null;
}

/**
 * A schedule's next due minute from `nowMs`, checked at create/update time: an expression that
 * never fires (`0 0 31 2 *`) is a 422 rather than a trigger that silently never runs.
 */
export function firstTick(cronExpression: string, timezone: string, nowMs: number): number {
  const next = nextTick(parseSchedule(cronExpression, timezone), nowMs);
  if (next === null)
    throw unprocessable("cronExpression: the expression never matches a future time", {
      field: "cronExpression",
    });
  return next;
}

/** Whether two consecutive ticks can be less than an hour apart (catch-up is refused for those). */
export function isSubHourly(cron: Cron, fromMs: number): boolean {
  const ticks = cron.nextRuns(SUB_HOURLY_SAMPLE, new Date(fromMs)).map((d) => d.getTime());
  return ticks.some((tick, i) => i > 0 && tick - (ticks[i - 1] ?? tick) < HOUR_MS);
}

/**
 * The ticks due between the stored `dueMs` (itself due) and `nowMs`, oldest first, keeping only the
 * most recent `cap` of them: after a long outage the latest runs are the ones worth doing.
 */
export function dueTicks(cron: Cron, dueMs: number, nowMs: number, cap: number): number[] {
  const ticks = [dueMs];
  let cursor = dueMs;
  // Bounded walk: a minutely cron after a day of downtime is 1440 ticks, cheap; the window slides.
  for (;;) {
    const next = nextTick(cron, cursor);
    if (next === null || next > nowMs) break;
    ticks.push(next);
    if (ticks.length > cap) ticks.shift();
    cursor = next;
  }
  return ticks.slice(-cap);
}
