import type { Env } from "../../../workers/core/env";

/**
 * When a webhook delivery is tried again. Pure arithmetic, so the schedule, the jitter bounds and the
 * Retry-After rules are testable without a clock or a receiver.
 */

/** Wait before attempt n+1 (index n): 8 attempts over about 28 hours, as the issue specifies. */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** ±10%: receivers coming back from an outage are not hit by every queue at the same instant. */
export const JITTER = 0.1;

/** A receiver may slow us down, but not park its queue for longer than this with one header. */
export const RETRY_AFTER_CAP_MS = 24 * 3_600_000;

/** `WEBHOOK_RETRY_SCHEDULE_MS` ("0,200,400": its length is the number of attempts), else the default. */
export function parseSchedule(value: string | undefined): readonly number[] {
  if (!value?.trim()) return DEFAULT_RETRY_SCHEDULE_MS;
  const parts = value.split(",").map((part) => part.trim());
  if (!parts.every((part) => /^\d+$/.test(part))) return DEFAULT_RETRY_SCHEDULE_MS;
  return parts.map(Number);
}

export const retrySchedule = (env: Env): readonly number[] => parseSchedule(env.WEBHOOK_RETRY_SCHEDULE_MS);

export function jittered(ms: number, random: () => number = Math.random): number {
  return Math.round(ms * (1 - JITTER + 2 * JITTER * random()));
}

/** A `Retry-After` header (delay in seconds, or an HTTP date) as milliseconds from `now`. */
export function parseRetryAfter(value: string | null, now: number): number | null {
  const text = value?.trim();
  if (!text) return null;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * The wait before the next attempt once `attempts` have failed, or null when none is left. Retry-After
 * only ever lengthens the wait: a receiver cannot make us retry faster than the schedule.
 */
export function retryDelay(
  attempts: number,
  schedule: readonly number[],
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number | null {
  const planned = schedule[attempts];
  if (planned === undefined) return null;
  const delay = jittered(planned, random);
  return retryAfterMs === null ? delay : Math.max(delay, Math.min(retryAfterMs, RETRY_AFTER_CAP_MS));
}
