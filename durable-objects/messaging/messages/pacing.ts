import { GROUP_JID, LID_JID, PERSON_JID } from "../../../bridge/src/protocol/messaging";
import { failure, type Outcome, type SessionContext } from "../context";

/**
 * Send pacing, a ban-risk control: at least `sendGapMs` between two messages the session sends, and
 * "typing…" shown in the chat for `typingMs` before each (inside the gap, so typing does not lengthen
 * it). Sends queue in order in the session's object; one that would wait longer than a minute is
 * refused rather than hold its caller that long. The queue lives in the object's memory: an evicted
 * object forgets the last send time, which at worst lets one message through early.
 */
const MAX_WAIT_MS = 60_000;

class SendPacer {
  private tail: Promise<void> = Promise.resolve();
  private lastAt = 0;
  private waiting = 0;

  /** How long a send queued now would wait. */
  projectedWait(gapMs: number, now: number): number {
    return Math.max(0, this.lastAt + gapMs - now) + this.waiting * gapMs;
  }

  /** Resolves when it is this send's turn; `typing` runs for the last `typingMs` of the wait. */
  turn(gapMs: number, typingMs: number, typing: () => Promise<void>): Promise<void> {
    this.waiting++;
    const turn = this.tail.then(async () => {
      const wait = Math.max(0, this.lastAt + gapMs - Date.now());
      await sleep(Math.max(0, wait - typingMs));
      if (typingMs > 0) {
        await typing().catch(() => undefined);
        await sleep(typingMs);
      }
      this.lastAt = Date.now();
    });
    const settled = turn.finally(() => {
      this.waiting--;
    });
    this.tail = settled.catch(() => undefined);
    return settled;
  }
}

const sleep = (ms: number) =>
  ms > 0 ? new Promise<void>((resolve) => setTimeout(resolve, ms)) : Promise.resolve();

/** One pacer per session object (its SQLite handle is the object's identity here). */
const pacers = new WeakMap<SqlStorage, SendPacer>();

const showsTyping = (to: string) => PERSON_JID.test(to) || LID_JID.test(to) || GROUP_JID.test(to);

/** Waits for this send's turn (typing shown meanwhile); a failure when the queue is too long. */
export async function paceSend(ctx: SessionContext, to: string): Promise<Outcome<never> | null> {
  const { settings } = await ctx.config();
  const gapMs = settings.sendGapMs ?? 0;
  const typingMs = showsTyping(to) ? (settings.typingMs ?? 0) : 0;
  if (gapMs === 0 && typingMs === 0) return null;
  let pacer = pacers.get(ctx.sql);
  if (!pacer) {
    pacer = new SendPacer();
    pacers.set(ctx.sql, pacer);
  }
  if (pacer.projectedWait(gapMs, Date.now()) > MAX_WAIT_MS) {
    return failure(
      503,
      `Sends on this session are paced (one every ${gapMs} ms) and the queue is over a minute long: retry later`,
    );
  }
  await pacer.turn(gapMs, typingMs, async () => {
    await ctx.wa({ op: "presence", chat: to, presence: "composing" });
  });
  return null;
}
