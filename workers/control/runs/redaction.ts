import type { Env } from "../../core/env";
import type { Db } from "../../db/client";
import { companyScrubber, type Scrubber, scrubStep } from "../secrets";
import type { AnnouncedRun } from "./live";

/**
 * Run output is scrubbed of the company's secret values and of platform keys as it arrives, before
 * it is stored or announced (the scrubbing itself is secrets/scrub.ts). Output comes in arbitrary
 * chunks (whatever the pipe gave the runner), so a value can be split between two frames: the end
 * of a frame that could be the start of a secret is held back and scrubbed together with the next
 * frame of the same stream; what is still held when the run ends is stored then (it completed no
 * secret). Held text waits in the RunDispatcher's storage, which outlives hibernation between
 * frames; the decrypted values are cached in memory per run, so a secret is decrypted once per run
 * (again only after the object was evicted), not once per line.
 *
 * Holding a tail only works in order, and frames do not reach the object in order: workerd delivers
 * a burst of socket messages that queued behind an open input gate in another order than they were
 * sent (seen in tests: 0, 4, 3, 2, 1, 8, 7, 6, 5). So a run's frames are put back in `seq` order
 * first: one that comes early is parked in storage until the frames before it have arrived, and is
 * then scrubbed and stored after them. At most MAX_PARKED wait: past that, or when the run ends, the
 * missing frames are given up on and the parked ones scrubbed in order. A frame older than the next
 * expected (a duplicate) is scrubbed on its own.
 */

type Stream = "stdout" | "stderr" | "system";
export interface OutputChunk {
  seq: number;
  stream: Stream;
  text: string;
}

const linkPrefix = (linkId: string) => `held:${linkId}:`;
/** Frames that came before their turn wait, at most this many per run. */
const MAX_PARKED = 64;
const SEQ_DIGITS = 10;
/** Scrubbers of this many runs stay cached; a run that ended without a finish ages out. */
const CACHED_RUNS = 64;
/** Storage deletes at most this many keys at once. */
const DELETE_BATCH = 128;
const runPrefix = (linkId: string, runId: string) => `${linkPrefix(linkId)}${runId}:`;
/** Per run: `tail:<stream>` (text held back), `next` (the seq due), `park:<seq>` (an early frame). */
const keysOf = (linkId: string, runId: string) => {
  const prefix = runPrefix(linkId, runId);
  return {
    prefix,
    next: `${prefix}next`,
    tail: (stream: Stream) => `${prefix}tail:${stream}`,
    parkPrefix: `${prefix}park:`,
    park: (seq: number) => `${prefix}park:${String(seq).padStart(SEQ_DIGITS, "0")}`,
  };
};

export class OutputRedactor {
  /** Per run: the scrubber made from its company's secrets when its first output arrived. */
  readonly #scrubbers = new Map<string, Promise<Scrubber>>();

  constructor(
    private readonly env: Env,
    private readonly storage: DurableObjectStorage,
  ) {}

  scrubber(db: Db, run: Pick<AnnouncedRun, "id" | "companyId">): Promise<Scrubber> {
    const cached = this.#scrubbers.get(run.id);
    if (cached) return cached;
    if (this.#scrubbers.size >= CACHED_RUNS) {
      const oldest = this.#scrubbers.keys().next().value;
      if (oldest !== undefined) this.#scrubbers.delete(oldest);
    }
    const loading = companyScrubber(this.env, db, run.companyId);
    loading.catch(() => this.#scrubbers.delete(run.id));
    this.#scrubbers.set(run.id, loading);
    return loading;
  }

  /**
   * The chunks one output frame lets us store, scrubbed: none while it waits for earlier frames;
   * itself and the parked frames it was the gap before when its turn has come.
   */
  async output(db: Db, linkId: string, run: AnnouncedRun, frame: OutputChunk): Promise<OutputChunk[]> {
    const scrubber = await this.scrubber(db, run);
    // Output arriving after the run ended cannot be completed by anything: nothing is held.
    if (run.status !== "running") return [{ ...frame, text: scrubber.scrub(frame.text) }];
    const keys = keysOf(linkId, run.id);
    const next = (await this.storage.get<number>(keys.next)) ?? 0;
    if (frame.seq < next) return [{ ...frame, text: scrubber.scrub(frame.text) }];
    if (frame.seq > next) {
      await this.storage.put(keys.park(frame.seq), frame);
      const parked = await this.storage.list<OutputChunk>({ prefix: keys.parkPrefix, limit: MAX_PARKED + 1 });
      // Too many waiting: the frames before them are given up on, the parked ones taken in order.
      return parked.size > MAX_PARKED ? this.#drain(scrubber, linkId, run.id, [...parked.values()]) : [];
    }
    const out = [await this.#step(scrubber, linkId, run.id, frame)];
    for (let seq = frame.seq + 1; ; seq++) {
      const parked = await this.storage.get<OutputChunk>(keys.park(seq));
      if (!parked) {
        await this.storage.put(keys.next, seq);
        return out;
      }
      await this.storage.delete(keys.park(seq));
      out.push(await this.#step(scrubber, linkId, run.id, parked));
    }
  }

  /** Scrubs `frames` (parked, in seq order) as if nothing were missing before them; `next` moves past. */
  async #drain(
    scrubber: Scrubber,
    linkId: string,
    runId: string,
    frames: OutputChunk[],
  ): Promise<OutputChunk[]> {
    const keys = keysOf(linkId, runId);
    const out: OutputChunk[] = [];
    for (const frame of frames) {
      await this.storage.delete(keys.park(frame.seq));
      out.push(await this.#step(scrubber, linkId, runId, frame));
    }
    const last = frames.at(-1);
    if (last) await this.storage.put(keys.next, last.seq + 1);
    return out;
  }

  /** One frame in its turn: scrubbed together with what its stream held back, holding back its own end. */
  async #step(scrubber: Scrubber, linkId: string, runId: string, frame: OutputChunk): Promise<OutputChunk> {
    const key = keysOf(linkId, runId).tail(frame.stream);
    const held = (await this.storage.get<string>(key)) ?? "";
    const step = scrubStep(scrubber, held, frame.text);
    if (step.held) await this.storage.put(key, step.held);
    else if (held) await this.storage.delete(key);
    return { ...frame, text: step.out };
  }

  /**
   * What is left of the run's output as it ends, in order: parked frames whose gap never filled
   * (scrubbed in seq order), then what each stream still held back (to store after the last frame,
   * with no seq of its own yet). Everything the run kept in storage is forgotten.
   */
  async release(
    db: Db,
    linkId: string,
    run: Pick<AnnouncedRun, "id" | "companyId">,
  ): Promise<{ parked: OutputChunk[]; tails: { stream: Stream; text: string }[] }> {
    const keys = keysOf(linkId, run.id);
    const waiting = await this.storage.list<OutputChunk>({ prefix: keys.parkPrefix });
    const parked =
      waiting.size > 0
        ? await this.#drain(await this.scrubber(db, run), linkId, run.id, [...waiting.values()])
        : [];
    const streams: Stream[] = ["stdout", "stderr", "system"];
    const tails: { stream: Stream; text: string }[] = [];
    for (const stream of streams) {
      const text = await this.storage.get<string>(keys.tail(stream));
      if (text) tails.push({ stream, text });
    }
    const all = [...(await this.storage.list({ prefix: keys.prefix })).keys()];
    for (let at = 0; at < all.length; at += DELETE_BATCH)
      await this.storage.delete(all.slice(at, at + DELETE_BATCH));
    this.#scrubbers.delete(run.id);
    return { parked, tails };
  }

  /** A closed link's runs failed: what they held back is dropped with them. */
  async dropLink(linkId: string): Promise<void> {
    const keys = [...(await this.storage.list({ prefix: linkPrefix(linkId) })).keys()];
    for (let at = 0; at < keys.length; at += DELETE_BATCH)
      await this.storage.delete(keys.slice(at, at + DELETE_BATCH));
  }
}
