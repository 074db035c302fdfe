import { GROUP_JID, LID_JID, PERSON_JID } from "../../../bridge/src/protocol/messaging";
import { failure, type Outcome, type SessionContext, success } from "../context";

/**
 * Send pacing, a ban-risk control: at least `sendGapMs` between two messages the session sends, and
 * "typing…" shown in the chat for `typingMs` before each (inside the gap, so typing does not lengthen
 * it). The gap counts from when the previous send was done (the bridge answered: WhatsApp has it), not
 * from when it started: a first message to a new chat waits for device lists and keys, and counting from
 * its start would let the next one reach WhatsApp sooner than the gap (seen on real Baileys). Sends
 * queue in order in the session's object; one that would wait longer than a minute is refused rather
 * than hold its caller that long. The queue lives in the object's memory: an evicted object forgets the
 * last send time, which at worst lets one message through early.
 */
const MAX_WAIT_MS = 60_000;

/** Called once the paced send is done, whether it succeeded or not: the next one's gap starts then. */
export type SendDone = () => void;

const NOTHING_TO_RELEASE: SendDone = () => {};

class SendPacer {
  private tail: Promise<void> = Promise.resolve();
  private lastAt = 0;
  private waiting = 0;

  /** How long a send queued now would wait. */
  projectedWait(gapMs: number, now: number): number {
    return Math.max(0, this.lastAt + gapMs - now) + this.waiting * gapMs;
  }

  /**
   * Resolves when it is this send's turn, with what to call when the send is done; `typing` runs for
   * the last `typingMs` of the wait. The next turn waits for that call.
   */
  turn(gapMs: number, typingMs: number, typing: () => Promise<void>): Promise<SendDone> {
    this.waiting++;
    let markDone: SendDone = NOTHING_TO_RELEASE;
    const done = new Promise<void>((resolve) => {
      markDone = () => {
        this.lastAt = Date.now();
        resolve();
      };
    });
    const turn = this.tail.then(async () => {
      const wait = Math.max(0, this.lastAt + gapMs - Date.now());
      await sleep(Math.max(0, wait - typingMs));
      if (typingMs > 0) {
        await typing().catch(() => undefined);
        await sleep(typingMs);
      }
    });
    const settled = turn.finally(() => {
      this.waiting--;
    });
    this.tail = settled.then(
      () => done,
      () => undefined,
    );
    return settled.then(() => once(markDone));
  }
}

const once = (fn: SendDone): SendDone => {
  let called = false;
  return () => {
    if (called) return;
    called = true;
    fn();
  };
};

const sleep = (ms: number) =>
  ms > 0 ? new Promise<void>((resolve) => setTimeout(resolve, ms)) : Promise.resolve();

/** One pacer per session object (its SQLite handle is the object's identity here). */
const pacers = new WeakMap<SqlStorage, SendPacer>();

const showsTyping = (to: string) => PERSON_JID.test(to) || LID_JID.test(to) || GROUP_JID.test(to);

/**
 * Waits for this send's turn (typing shown meanwhile) and answers what to call once the send is done;
 * a failure when the queue is too long.
 */
export async function paceSend(ctx: SessionContext, to: string): Promise<Outcome<SendDone>> {
  const { settings } = await ctx.config();
  const gapMs = settings.sendGapMs ?? 0;
  const typingMs = showsTyping(to) ? (settings.typingMs ?? 0) : 0;
  if (gapMs === 0 && typingMs === 0) return success(NOTHING_TO_RELEASE);
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
  const done = await pacer.turn(gapMs, typingMs, async () => {
    await ctx.wa({ op: "presence", chat: to, presence: "composing" });
  });
  return success(done);
}
