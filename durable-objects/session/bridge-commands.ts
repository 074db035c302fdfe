import type { CommandName } from "../../bridge/src/protocol/link";
import { type FailureStatus, failure, type Outcome } from "../messaging/context";

/** The 503 of a session whose bridge cannot do what was asked right now. */
export const notReady = (detail: string): Outcome<never> => failure(503, detail);

/** The bridge's answer to `pair`, as the API gives it. */
export function pairingCodeOf(result: Outcome<unknown>): Outcome<{ pairingCode: string }> {
  if (!result.ok) return result;
  const code = (result.data as { code?: unknown } | null)?.code;
  return typeof code === "string"
    ? { ok: true, data: { pairingCode: code } }
    : notReady("The bridge returned no pairing code");
}

/** How long the edge waits for a bridge to answer a command. */
export const COMMAND_TIMEOUT_MS = 15_000;
/**
 * The slowest a file may move between WhatsApp, the bridge and R2 before its command is given up: 1 MB/s
 * (a 200 MB document gets 215 s, a 2 GB one about 35 minutes). A bridge that dies is noticed when its
 * link drops, not by this timeout.
 */
const SLOWEST_TRANSFER_BYTES_PER_MS = 1000;

/** The wait for a command that moves `bytes` of media (none: the plain timeout). */
export function commandTimeoutMs(bytes: number | undefined): number {
  return COMMAND_TIMEOUT_MS + Math.ceil((bytes ?? 0) / SLOWEST_TRANSFER_BYTES_PER_MS);
}

const FAILURE_STATUSES: ReadonlySet<number> = new Set([400, 403, 404, 409, 413, 500, 503]);

/** The status a failed result frame carries, if it is one the edge passes on; else `fallback`. */
export function failureStatusOf(status: number | undefined, fallback: FailureStatus): FailureStatus {
  return status !== undefined && FAILURE_STATUSES.has(status) ? (status as FailureStatus) : fallback;
}

type Pending = { resolve: (outcome: Outcome<unknown>) => void; timer: ReturnType<typeof setTimeout> };

/**
 * Commands in flight from a SessionDO to its bridge: each gets an id and a deadline, and is settled
 * exactly once, by the bridge's result, by the timeout, or when the link drops.
 */
export class BridgeCommands {
  private readonly pending = new Map<string, Pending>();

  send(
    ws: WebSocket | null,
    name: CommandName,
    args: Record<string, unknown>,
    timeoutMs = COMMAND_TIMEOUT_MS,
  ): Promise<Outcome<unknown>> {
    if (!ws)
      return Promise.resolve(failure(503, "Session not ready: no bridge holds this session right now"));
    const id = crypto.randomUUID();
    const result = new Promise<Outcome<unknown>>((resolve) => {
      const timer = setTimeout(
        () => this.settle(id, failure(503, "The bridge did not answer in time")),
        timeoutMs,
      );
      this.pending.set(id, { resolve, timer });
    });
    const frame = { type: "command", id, name, args, deadline: Date.now() + timeoutMs };
    ws.send(JSON.stringify(frame));
    return result;
  }

  settle(id: string, outcome: Outcome<unknown>): void {
    const pending = this.pending.get(id);
    if (!pending) return;
    clearTimeout(pending.timer);
    this.pending.delete(id);
    pending.resolve(outcome);
  }

  failAll(reason: string): void {
    for (const id of [...this.pending.keys()]) this.settle(id, failure(503, reason));
  }
}
