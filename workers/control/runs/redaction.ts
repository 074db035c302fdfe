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
 * A frame that arrives older than the one whose tail is held (frames are sent in order over one
 * socket, so only a misbehaving runner does this) is scrubbed on its own.
 */

type Stream = "stdout" | "stderr" | "system";
interface Held {
  seq: number;
  text: string;
}

const linkPrefix = (linkId: string) => `held:${linkId}:`;
/** Scrubbers of this many runs stay cached; a run that ended without a finish ages out. */
const CACHED_RUNS = 64;
/** Storage deletes at most this many keys at once. */
const DELETE_BATCH = 128;
const runPrefix = (linkId: string, runId: string) => `${linkPrefix(linkId)}${runId}:`;

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

  /** The text of one output frame as it may be stored: scrubbed, minus what it holds back. */
  async output(
    db: Db,
    linkId: string,
    run: AnnouncedRun,
    frame: { seq: number; stream: Stream; text: string },
  ): Promise<string> {
    const scrubber = await this.scrubber(db, run);
    // Output arriving after the run ended cannot be completed by anything: nothing is held.
    if (run.status !== "running") return scrubber.scrub(frame.text);
    const key = `${runPrefix(linkId, run.id)}${frame.stream}`;
    const held = await this.storage.get<Held>(key);
    if (held && frame.seq < held.seq) return scrubber.scrub(frame.text);
    const step = scrubStep(scrubber, held?.text ?? "", frame.text);
    if (step.held) await this.storage.put(key, { seq: frame.seq, text: step.held } satisfies Held);
    else if (held) await this.storage.delete(key);
    return step.out;
  }

  /** What the run's streams still hold back, handed over (and forgotten) as the run ends. */
  async release(linkId: string, runId: string): Promise<{ stream: Stream; text: string }[]> {
    const prefix = runPrefix(linkId, runId);
    const held = await this.storage.list<Held>({ prefix });
    if (held.size > 0) await this.storage.delete([...held.keys()]);
    this.#scrubbers.delete(runId);
    return [...held]
      .map(([key, value]) => ({ stream: key.slice(prefix.length) as Stream, text: value.text }))
      .filter((tail) => tail.text !== "");
  }

  /** A closed link's runs failed: what they held back is dropped with them. */
  async dropLink(linkId: string): Promise<void> {
    const keys = [...(await this.storage.list({ prefix: linkPrefix(linkId) })).keys()];
    for (let at = 0; at < keys.length; at += DELETE_BATCH)
      await this.storage.delete(keys.slice(at, at + DELETE_BATCH));
  }
}
