/**
 * One JSON line per notable event on stdout. Callers pass only plain fields: never the bridge token,
 * never auth state (creds and keys are the WhatsApp account itself).
 */
export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, string | number | boolean | null | undefined>;
export type Log = (level: LogLevel, msg: string, fields?: LogFields) => void;

/**
 * LOG_LEVEL as the whole local stack reads it (scripts/log-settings.mjs): `log` is wrangler's name for
 * info, `none` prints nothing. The default is warn, as for the Worker: a healthy process is quiet.
 */
export const LOG_LEVELS = ["debug", "info", "log", "warn", "error", "none"] as const;
export type LogLevelSetting = (typeof LOG_LEVELS)[number];
export const DEFAULT_LOG_LEVEL: LogLevelSetting = "warn";

/** How much each setting shows; a line is written when its level's rank is at most the setting's. */
const VERBOSITY: Record<LogLevelSetting, number> = { none: 0, error: 1, warn: 2, info: 3, log: 3, debug: 4 };

export interface JsonLogOptions {
  /** Lines less severe than this are dropped (default warn). */
  level?: LogLevelSetting;
  write?: (line: string) => void;
}

export function jsonLog(options: JsonLogOptions = {}): Log {
  const shown = VERBOSITY[options.level ?? DEFAULT_LOG_LEVEL];
  const write = options.write ?? ((line: string) => process.stdout.write(line));
  return (level, msg, fields) => {
    if (VERBOSITY[level] > shown) return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
  };
}

export const silentLog: Log = () => {};

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
