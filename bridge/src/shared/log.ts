/**
 * One JSON line per notable event on stdout. Callers pass only plain fields: never the bridge token,
 * never auth state (creds and keys are the WhatsApp account itself).
 */
export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, string | number | boolean | null | undefined>;
export type Log = (level: LogLevel, msg: string, fields?: LogFields) => void;

export function jsonLog(write: (line: string) => void = (line) => process.stdout.write(line)): Log {
  return (level, msg, fields) => {
    write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
  };
}

export const silentLog: Log = () => {};

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
