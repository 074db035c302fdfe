import { Cron } from "croner";

/**
 * Time rules of scheduled messages. Every instant is stored in epoch ms (UTC); a timezone is always
 * explicit (default UTC), never the server's or a hard-coded one, as the reference's were.
 */

export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/i;
const LOCAL = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?$/;

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The wall-clock time in `timeZone` at the instant `ms`. */
export function wallTime(ms: number, timeZone: string): WallTime {
  const parts = formatterFor(timeZone).formatToParts(new Date(ms));
  const field = (type: Intl.DateTimeFormatPartTypes) =>
    Number(parts.find((part) => part.type === type)?.value);
  return {
    year: field("year"),
    month: field("month"),
    day: field("day"),
    hour: field("hour") % 24,
    minute: field("minute"),
    second: field("second"),
  };
}

const asUtc = (wall: WallTime) =>
  Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);

/** How far `timeZone` is ahead of UTC at the instant `ms`. */
function offsetAt(ms: number, timeZone: string): number {
  const whole = Math.floor(ms / 1000) * 1000;
  return asUtc(wallTime(whole, timeZone)) - whole;
}

const DAY_MS = 86_400_000;

/**
 * The instant a wall-clock time in `timeZone` names. A time that occurs twice (clocks going back)
 * takes its first occurrence; a time skipped by clocks going forward moves forward by the skip.
 */
export function zonedToInstant(wall: WallTime, timeZone: string, ms = 0): number {
  const naive = asUtc(wall);
  // The offsets a day either side cover both sides of any DST change near this time.
  const before = naive - offsetAt(naive - DAY_MS, timeZone);
  const after = naive - offsetAt(naive + DAY_MS, timeZone);
  const matching = [before, after].filter((candidate) => asUtc(wallTime(candidate, timeZone)) === naive);
  return (matching.length > 0 ? Math.min(...matching) : before) + ms;
}

/**
 * `sendAt` as an instant: an ISO 8601 date-time with an offset (`Z`, `+07:00`) means exactly that;
 * without one it is a local date-time in `timeZone`. Null when it is neither, or not a real date.
 */
export function parseSendAt(text: string, timeZone: string): number | null {
  if (WITH_OFFSET.test(text)) {
    const ms = Date.parse(text);
    return Number.isNaN(ms) ? null : ms;
  }
  const match = LOCAL.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second = "0"] = match.slice(1, 7).map((part) => part ?? "0");
  const wall: WallTime = {
    year: Number(year),
    month: Number(month),
    day: Number(day),
    hour: Number(hour),
    minute: Number(minute),
    second: Number(second),
  };
  // Date.UTC rolls 31 April into 1 May; a date that does not survive the round trip is not real.
  const check = new Date(asUtc(wall));
  if (
    check.getUTCFullYear() !== wall.year ||
    check.getUTCMonth() + 1 !== wall.month ||
    check.getUTCDate() !== wall.day ||
    check.getUTCHours() !== wall.hour ||
    check.getUTCMinutes() !== wall.minute ||
    check.getUTCSeconds() !== wall.second
  ) {
    return null;
  }
  return zonedToInstant(wall, timeZone, Number((match[7] ?? "0").padEnd(3, "0")));
}

function cronOf(pattern: string, timeZone: string): Cron {
  return new Cron(pattern, { timezone: timeZone, mode: "5-part" });
}

/** Null when `pattern` is a valid 5-field cron expression with a future tick; else why not. */
export function cronProblem(pattern: string, timeZone: string, now: number): string | null {
  try {
    if (cronOf(pattern, timeZone).nextRun(new Date(now)) === null) return "it never fires";
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** The first tick of `pattern` in `timeZone` strictly after `after`, or null if there is none. */
export function nextTick(pattern: string, timeZone: string, after: number): number | null {
  return cronOf(pattern, timeZone).nextRun(new Date(after))?.getTime() ?? null;
}
