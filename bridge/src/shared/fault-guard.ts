/**
 * One process holds every session the edge assigned to it, so a single stray promise rejection or
 * exception (ours or a library's, e.g. Baileys') must not end the process: by default Node exits on
 * either, dropping every WhatsApp socket at once. The guard logs the fault, names the session whose
 * work raised it (its sockets, timers and promises were created inside `asSession`), and keeps going.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { errorMessage, type Log } from "./log.ts";

const sessionScope = new AsyncLocalStorage<string>();

/** Runs `work` as session `sessionId`'s: everything it starts (sockets, timers, promises) stays so. */
export function asSession<T>(sessionId: string, work: () => T): T {
  return sessionScope.run(sessionId, work);
}

/** The session whose work is running now, if any. */
export function currentSession(): string | null {
  return sessionScope.getStore() ?? null;
}

export interface FaultGuardOptions {
  log: Log;
  /** Values never to print (the bridge's token), should an error message carry one. */
  secrets?: string[];
}

const MESSAGE_LIMIT = 512;

/**
 * What is safe to log about a fault: an Error's name and message, with secrets masked; of anything
 * else, only its type (a rejected value may be an auth state or a frame, which must never be printed).
 */
export function describeFault(fault: unknown, secrets: string[] = []): { type: string; error: string } {
  if (!(fault instanceof Error)) return { type: typeof fault, error: "a non-Error value (not printed)" };
  let message = errorMessage(fault);
  for (const secret of secrets) if (secret) message = message.split(secret).join("[redacted]");
  return { type: fault.name, error: message.slice(0, MESSAGE_LIMIT) };
}

/** Installs the process-wide handlers (once per process); answers a function that removes them. */
export function installFaultGuard(options: FaultGuardOptions): () => void {
  const report = (what: string) => (fault: unknown) => {
    options.log("error", what, { session: currentSession(), ...describeFault(fault, options.secrets) });
  };
  const onRejection = report("unhandled rejection; the bridge keeps running");
  const onException = report("uncaught exception; the bridge keeps running");
  process.on("unhandledRejection", onRejection);
  process.on("uncaughtException", onException);
  // A log pipe whose reader is gone fails every write with EPIPE. Unhandled, each failure became an
  // uncaught exception that this guard logged, to the same pipe: a busy loop (an orphaned bridge was
  // seen spinning at 60% CPU). With nowhere to log, the process keeps working silently instead.
  const ignoreLogStreamError = () => undefined;
  process.stdout.on("error", ignoreLogStreamError);
  process.stderr.on("error", ignoreLogStreamError);
  return () => {
    process.off("unhandledRejection", onRejection);
    process.off("uncaughtException", onException);
    process.stdout.off("error", ignoreLogStreamError);
    process.stderr.off("error", ignoreLogStreamError);
  };
}
