/**
 * The media bench's driver: a file of BENCH_MEDIA_MB (100) on disk, then, per round, a plain streamed
 * copy of it to another file (the baseline) and the same file pushed to the edge by the bridge's own
 * uploader (bridge/src/media/edge-upload.ts: 8 MiB parts into R2), as the bridge holding the session.
 * Prints `MEDIA_RESULT <json>` with each round's seconds and this process's peak RSS.
 *
 *   node --import tsx bench/support/media-upload.ts <edge origin> <session internal id> <bridge token>
 */
import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { uploadToEdge } from "../../bridge/src/media/edge-upload.ts";
import { MEDIA_MAX_BYTES } from "../../bridge/src/protocol/messaging.ts";

const MIB = 1024 * 1024;
const [origin, sessionId, token] = process.argv.slice(2);
if (!origin || !sessionId || !token) throw new Error("usage: media-upload.ts <origin> <session id> <token>");
const megabytes = Number(process.env.BENCH_MEDIA_MB ?? "100");
const rounds = Number(process.env.BENCH_MEDIA_ROUNDS ?? "3");

const dir = await mkdtemp(path.join(tmpdir(), "bench-media-"));
const source = path.join(dir, "file.bin");
// Random bytes, written 1 MiB at a time: nothing compresses or dedups it along the way.
const chunk = randomBytes(MIB);
await writeFile(source, Buffer.alloc(0));
const out = createWriteStream(source);
for (let i = 0; i < megabytes; i++) out.write(i % 2 ? chunk : chunk.reverse());
await new Promise<void>((resolve, reject) =>
  out.end((error?: Error | null) => (error ? reject(error) : resolve())),
);

let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 50);
const baseRss = process.memoryUsage().rss;

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - started) / 1e9;
}

const copySeconds: number[] = [];
const uploadSeconds: number[] = [];
try {
  for (let round = 0; round < rounds; round++) {
    const target = path.join(dir, `copy-${round}.bin`);
    copySeconds.push(
      await timed(() =>
        pipeline(createReadStream(source, { highWaterMark: MIB }), createWriteStream(target)),
      ),
    );
    await rm(target);
    const ref = `benchmedia${round}${randomBytes(6).toString("hex")}`;
    uploadSeconds.push(
      await timed(() =>
        uploadToEdge(
          { origin, token, sessionId },
          ref,
          {
            mimetype: "application/octet-stream",
            fileName: "bench.bin",
            chunks: createReadStream(source, { highWaterMark: MIB }),
          },
          MEDIA_MAX_BYTES,
        ),
      ),
    );
  }
} finally {
  clearInterval(sampler);
  await rm(dir, { recursive: true, force: true });
}
console.log(`MEDIA_RESULT ${JSON.stringify({ megabytes, copySeconds, uploadSeconds, baseRss, peakRss })}`);
