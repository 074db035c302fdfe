/**
 * The one way the Worker inflates gzip data it did not write itself (package archives, from the API
 * and the dashboard alike). Compressed bytes go into workerd's DecompressionStream a small slice at a
 * time, and only when the reader has nothing left to read, so at most one slice's output (≤ 4 MiB at
 * deflate's 1032:1 ceiling) exists ahead of the reader. Inflated bytes are counted as they are read:
 * past `maxBytes` the stream is refused; past `maxMs` (the CPU-time check: wall time, which workerd
 * advances between the turns this reader yields) too. Every refusal is a 400 that names the limit.
 *
 * Why not `pipeThrough`: workerd inflates each written chunk completely before a read is answered
 * and does not hold writes back for a slow reader, so a 2 MiB archive written whole (or piped) became
 * 2 GiB in memory, one uninterrupted 38 s of work, before the reader could refuse anything.
 */
import { badRequest } from "./errors";

export interface InflateBudget {
  /** Inflated bytes allowed in all; one more is refused. */
  maxBytes: number;
  /** Wall-clock time allowed from the first read. */
  maxMs: number;
  /** What is inflated, for the messages ("Package archive"). */
  label: string;
}

/** Compressed bytes per write: bounds the output any one step produces (and holds the isolate). */
const SLICE_BYTES = 4096;

type Read = ReadableStreamReadResult<Uint8Array>;

/** One turn of the event loop: the other requests of this isolate run, and workerd's clock moves. */
const nextTurn = () => new Promise<null>((resolve) => setTimeout(() => resolve(null), 0));

export class BudgetedInflater {
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private pending: Promise<Read> | null = null;
  private offset = 0;
  private closed = false;
  private inflated = 0;
  private startedAt: number | null = null;

  constructor(
    private readonly compressed: Uint8Array,
    private readonly budget: InflateBudget,
  ) {
    const stream = new DecompressionStream("gzip");
    this.writer = stream.writable.getWriter();
    this.reader = stream.readable.getReader();
  }

  /** The next inflated chunk, or null at the end of the data. */
  async read(): Promise<Uint8Array | null> {
    this.startedAt ??= Date.now();
    for (;;) {
      this.checkTime();
      const result = await this.nextReady();
      if (result === null) {
        await this.feed();
        continue;
      }
      if (result.done) return null;
      this.inflated += result.value.byteLength;
      if (this.inflated > this.budget.maxBytes)
        throw badRequest(`${this.budget.label} inflates to more than ${this.budget.maxBytes} bytes`);
      return result.value;
    }
  }

  /** Stops inflating; what was buffered is dropped. */
  cancel(): void {
    this.reader.cancel().catch(() => undefined);
    this.writer.abort().catch(() => undefined);
  }

  /**
   * The outstanding read once it has an answer, or null when none came within a turn: the stream
   * has nothing buffered and wants more input. After the input is closed the answer must come.
   */
  private async nextReady(): Promise<Read | null> {
    if (!this.pending) {
      this.pending = this.reader.read();
      // Handled here so a failure while a write is awaited is not an unhandled rejection.
      this.pending.catch(() => undefined);
    }
    try {
      const result = this.closed ? await this.pending : await Promise.race([this.pending, nextTurn()]);
      if (result !== null) this.pending = null;
      return result;
    } catch {
      throw this.invalid();
    }
  }

  /** The next slice of compressed input, or the end of it. */
  private async feed(): Promise<void> {
    try {
      if (this.offset < this.compressed.length) {
        const slice = this.compressed.subarray(this.offset, this.offset + SLICE_BYTES);
        this.offset += slice.length;
        await this.writer.write(slice);
      } else {
        this.closed = true;
        // Not awaited: closing settles once the reader drained the stream; a bad ending (a wrong
        // checksum, a truncated stream) rejects the outstanding read instead.
        this.writer.close().catch(() => undefined);
      }
    } catch {
      throw this.invalid();
    }
  }

  private checkTime(): void {
    const elapsed = Date.now() - (this.startedAt ?? Date.now());
    if (elapsed > this.budget.maxMs)
      throw badRequest(`${this.budget.label} took more than ${this.budget.maxMs / 1000} s to inflate`);
  }

  private invalid() {
    return badRequest(`${this.budget.label} is not valid gzip data`);
  }
}
