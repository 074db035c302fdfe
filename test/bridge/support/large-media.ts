/**
 * Large files for media tests without large buffers: deterministic content made chunk by chunk (and its
 * SHA-256 computed the same way), and a sampler of the process's memory while a transfer runs.
 */
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

export const MIB = 1024 * 1024;

export interface Generated {
  /** Bytes at the start (a real file's header, so sniffing sees a video or a PDF). */
  head?: Buffer;
  chunkBytes?: number;
}

/** The content's chunks: a fresh Buffer each (a consumer may keep them), all reproducible. */
export function* generatedChunks(size: number, { head, chunkBytes = 256 * 1024 }: Generated = {}) {
  for (let at = 0, index = 0; at < size; at += chunkBytes, index++) {
    const chunk = Buffer.alloc(Math.min(chunkBytes, size - at), (index * 31 + 7) & 0xff);
    if (chunk.length >= 4) chunk.writeUInt32BE(index >>> 0, 0);
    if (head && at < head.length) head.copy(chunk, 0, at, Math.min(head.length, at + chunk.length));
    yield chunk;
  }
}

export function generatedStream(size: number, options: Generated = {}): Readable {
  return Readable.from(generatedChunks(size, options), { objectMode: false });
}

export function generatedDigest(size: number, options: Generated = {}): { size: number; sha256: string } {
  const hash = createHash("sha256");
  for (const chunk of generatedChunks(size, options)) hash.update(chunk);
  return { size, sha256: hash.digest("hex") };
}

/** An async source that says how far it was read and whether its reader stopped it. */
export function trackedSource(size: number, options: Generated = {}) {
  const state = { read: 0, stopped: false };
  async function* source() {
    try {
      for (const chunk of generatedChunks(size, options)) {
        state.read += chunk.length;
        yield chunk;
      }
    } finally {
      state.stopped = true;
    }
  }
  return { chunks: source(), state };
}

/** V8's collector, reachable without starting node with --expose-gc. */
function garbageCollector(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

/**
 * Samples rss and arrayBuffers every few ms from now on, each sample after a full garbage collection:
 * what the process really holds, not what the collector has yet to free (a transfer that churns
 * through 200 MB of short-lived buffers leaves them around for a while otherwise). `stop` gives the
 * largest growth of each over the starting values.
 */
export function sampleMemory(everyMs = 25) {
  const collect = garbageCollector();
  collect();
  const start = process.memoryUsage();
  const peak = { rss: 0, arrayBuffers: 0 };
  const sample = () => {
    collect();
    const now = process.memoryUsage();
    peak.rss = Math.max(peak.rss, now.rss - start.rss);
    peak.arrayBuffers = Math.max(peak.arrayBuffers, now.arrayBuffers - start.arrayBuffers);
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { rssGrowth: peak.rss, arrayBuffersGrowth: peak.arrayBuffers };
    },
  };
}
