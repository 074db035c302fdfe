/**
 * The outbound half of at-least-once delivery on a session link. Events are numbered per (session,
 * epoch) from 1 and kept until the edge acknowledges them; after a reconnect everything unacknowledged
 * is sent again, in order. An event can be reserved before its content is ready (a QR still rendering
 * to PNG) so numbering follows the order things happened, and nothing after it is sent before it.
 */
import type { SessionEvent } from "../protocol/link.ts";

interface Waiter {
  resolve(): void;
  reject(error: Error): void;
}

export interface QueuedEvent {
  readonly seq: number;
  /** null while reserved and not yet filled. */
  event: SessionEvent | null;
  /** Callers waiting for this event to be durable at the edge (auth writes). */
  waiters: Waiter[] | null;
}

export class EventQueue {
  private seq = 0;
  /** Highest seq sent on the current connection; sending resumes after it. */
  private sentSeq = 0;
  private unacked: QueuedEvent[] = [];

  /** `send` puts one event on the wire; `canSend` says whether the link is up and welcomed. */
  constructor(
    private readonly send: (entry: { seq: number; event: SessionEvent }) => void,
    private readonly canSend: () => boolean,
  ) {}

  get pending(): number {
    return this.unacked.length;
  }

  /** Starts a lease: numbering continues after `lastSeq` (what the edge already stored; 0 if new). */
  restart(lastSeq: number): QueuedEvent[] {
    const old = this.unacked;
    this.unacked = [];
    this.seq = lastSeq;
    this.sentSeq = lastSeq;
    return old;
  }

  push(event: SessionEvent | null): QueuedEvent {
    const entry: QueuedEvent = { seq: ++this.seq, event, waiters: null };
    this.unacked.push(entry);
    this.flush();
    return entry;
  }

  fill(entry: QueuedEvent, event: SessionEvent): void {
    entry.event = event;
    this.flush();
  }

  /** Resolves once `entry` is acknowledged (the edge stored it). */
  durable(entry: QueuedEvent): Promise<void> {
    return new Promise((resolve, reject) => {
      entry.waiters ??= [];
      entry.waiters.push({ resolve, reject });
    });
  }

  /** The edge stored everything up to `seq` (acks and `welcome.lastSeq` are cumulative). */
  acknowledge(seq: number): void {
    while (this.unacked.length > 0 && (this.unacked[0]?.seq ?? Number.POSITIVE_INFINITY) <= seq) {
      for (const waiter of this.unacked.shift()?.waiters ?? []) waiter.resolve();
    }
  }

  /** A new connection: everything still unacknowledged goes out again, oldest first. */
  replay(): void {
    this.sentSeq = this.unacked[0] ? this.unacked[0].seq - 1 : this.seq;
    this.flush();
  }

  /** Sends what is ready, in order, stopping at the first reserved-but-unfilled event. */
  flush(): void {
    if (!this.canSend()) return;
    for (const entry of this.unacked) {
      if (entry.seq <= this.sentSeq) continue;
      if (entry.event === null) return;
      this.send({ seq: entry.seq, event: entry.event });
      this.sentSeq = entry.seq;
    }
  }

  /** The session left: nobody will ever acknowledge these. */
  rejectAll(error: Error): void {
    for (const entry of this.restart(0)) for (const waiter of entry.waiters ?? []) waiter.reject(error);
  }
}
