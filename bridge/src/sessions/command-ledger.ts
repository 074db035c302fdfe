/**
 * Exactly one result per command id. The edge may deliver a command twice (after a link blip);
 * a repeat of an answered command gets the remembered result, a repeat of a running one gets
 * nothing (the first run answers), and a command past its deadline is not run at all.
 */

import type { SessionToBridge } from "../protocol/link.ts";
import type { OperationFailureStatus } from "../protocol/operations.ts";
import type { Json } from "../protocol/seam.ts";
import { errorMessage, type Log } from "../shared/log.ts";

export type CommandFrame = Extract<SessionToBridge, { type: "command" }>;
/** `status` (failed `wa` operations): the HTTP-like status the edge answers its caller with. */
export type Outcome =
  | { ok: true; data?: Json }
  | { ok: false; error: string; status?: OperationFailureStatus };
export type ResultBody = { id: string } & Outcome;

/** Results remembered so a command delivered twice (after a reconnect) is answered, not run, again. */
const REMEMBERED_RESULTS = 64;

export function ok(data?: Json): Outcome {
  return data === undefined ? { ok: true } : { ok: true, data };
}

export function fail(error: string, status?: OperationFailureStatus): Outcome {
  const outcome: Outcome = { ok: false, error: error.slice(0, 1024) };
  return status === undefined ? outcome : { ...outcome, status };
}

export class CommandLedger {
  private readonly answered = new Map<string, ResultBody>();
  private readonly inFlight = new Set<string>();

  constructor(private readonly log: Log) {}

  /** Runs `execute` for a new command; resolves with the result to send, or null when none is due. */
  async run(command: CommandFrame, execute: () => Promise<Outcome>): Promise<ResultBody | null> {
    if (command.deadline < Date.now()) {
      this.log("info", "command past its deadline ignored", { command: command.name, id: command.id });
      return null;
    }
    const earlier = this.answered.get(command.id);
    if (earlier) return earlier;
    if (this.inFlight.has(command.id)) return null; // delivered again while running: one result only
    this.inFlight.add(command.id);
    let outcome: Outcome;
    try {
      outcome = await execute();
    } catch (error) {
      outcome = fail(errorMessage(error));
    }
    this.inFlight.delete(command.id);
    const result: ResultBody = { id: command.id, ...outcome };
    this.remember(result);
    // Sends are commands too: a line per success would cost more than the send itself.
    this.log(outcome.ok ? "debug" : "warn", "command answered", {
      command: command.name,
      id: command.id,
      ok: outcome.ok,
      ...(outcome.ok ? {} : { error: outcome.error, status: outcome.status }),
    });
    return result;
  }

  private remember(result: ResultBody): void {
    this.answered.set(result.id, result);
    if (this.answered.size <= REMEMBERED_RESULTS) return;
    const oldest = this.answered.keys().next();
    if (!oldest.done) this.answered.delete(oldest.value);
  }
}
