/**
 * Videos and documents on their way to WhatsApp (up to 2 GiB) are written to disk as they arrive
 * instead of held in memory: a private temp dir per file (mkdtemp: mode 0700), removed once the
 * operation is over, whether it succeeded or not (`releaseMedia`).
 */
import { type FileHandle, mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { PreparedMedia, SpooledFile } from "../protocol/seam.ts";

/** Enough of the start for every magic number mime.ts knows (and then some). */
export const HEAD_BYTES = 4096;

/** Where all spool dirs start (tests look for leftovers by this prefix). */
export const SPOOL_PREFIX = "bridge-spool-";

/** A file being written: chunks in order, then `finish` or, on any failure, `discard`. */
export class Spool {
  private size = 0;
  private readonly head = Buffer.alloc(HEAD_BYTES);
  private headLength = 0;

  private constructor(
    private readonly dir: string,
    readonly path: string,
    private readonly handle: FileHandle,
  ) {}

  static async open(): Promise<Spool> {
    const dir = await mkdtemp(path.join(tmpdir(), SPOOL_PREFIX));
    const file = path.join(dir, "media");
    try {
      return new Spool(dir, file, await open(file, "wx", 0o600));
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }

  /** Appends one chunk; awaiting each write is the backpressure (the reader waits for the disk). */
  async write(chunk: Uint8Array): Promise<void> {
    if (this.headLength < HEAD_BYTES) {
      const take = Math.min(HEAD_BYTES - this.headLength, chunk.byteLength);
      this.head.set(chunk.subarray(0, take), this.headLength);
      this.headLength += take;
    }
    await this.handle.write(chunk);
    this.size += chunk.byteLength;
  }

  async finish(): Promise<SpooledFile> {
    await this.handle.close();
    return { path: this.path, size: this.size, head: this.head.subarray(0, this.headLength) };
  }

  async discard(): Promise<void> {
    await this.handle.close().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** Removes a spooled file's private dir; media in memory has nothing to remove. */
export async function releaseMedia(media: PreparedMedia | null): Promise<void> {
  if (media && "file" in media) await rm(path.dirname(media.file.path), { recursive: true, force: true });
}
