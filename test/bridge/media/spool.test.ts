/**
 * Videos and documents to send are spooled to disk as they arrive (media/spool.ts), never held whole:
 * from a caller's URL and from an edge upload (real local HTTP servers), byte for byte, in a private
 * dir that is gone after `releaseMedia`; over the cap they are refused while streaming and leave no
 * file behind. Images stay in memory, capped at MEDIA_MEMORY_MAX_BYTES whatever the edge allows.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type EdgeMedia, prepareMedia } from "../../../bridge/src/media/media.ts";
import { releaseMedia } from "../../../bridge/src/media/spool.ts";
import type { OutgoingContent } from "../../../bridge/src/protocol/messaging.ts";
import type { Operation } from "../../../bridge/src/protocol/operations.ts";
import type { MediaFile, PreparedMedia } from "../../../bridge/src/protocol/seam.ts";
import { testVideo } from "../../support/video.ts";
import { generatedDigest, generatedStream, MIB, sampleMemory } from "../support/large-media.ts";
import { localServer } from "../support/local-server.ts";
import { startRecordingEdge } from "../support/recording-edge.ts";

let cleanup: Array<() => Promise<void>> = [];
let spoolRoot = "";
const originalTmp = process.env.TMPDIR;
// Spool dirs go under os.tmpdir(), which follows TMPDIR: a fresh one per test shows any leftover.
beforeEach(async () => {
  process.env.MEDIA_ALLOW_PRIVATE = "1";
  spoolRoot = await mkdtemp(path.join(tmpdir(), "spool-test-"));
  process.env.TMPDIR = spoolRoot;
});
afterEach(async () => {
  delete process.env.MEDIA_ALLOW_PRIVATE;
  if (originalTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = originalTmp;
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
  await rm(spoolRoot, { recursive: true, force: true });
});

const leftovers = () => readdir(spoolRoot);

async function server(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const local = await localServer(handler);
  cleanup.push(local.close);
  return local.origin;
}

const noEdge: EdgeMedia = { origin: "http://127.0.0.1:9", token: "t", sessionId: "s" };

const send = (content: OutgoingContent, maxBytes?: number): Operation => ({
  op: "send",
  to: "491511234567@s.whatsapp.net",
  messageId: "MSG00000033",
  content,
  ...(maxBytes ? { maxBytes } : {}),
});

async function fileDigest(file: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(file), hash);
  return { size: (await stat(file)).size, sha256: hash.digest("hex") };
}

function spooled(media: PreparedMedia | null): MediaFile {
  if (!media || !("file" in media)) throw new Error("expected a spooled file");
  return media;
}

async function refusal(promise: Promise<unknown>): Promise<{ status?: number; message: string }> {
  const error = await promise.then(
    () => new Error("expected a refusal"),
    (reason: unknown) => reason as Error & { status?: number },
  );
  return { status: (error as { status?: number }).status, message: error.message };
}

describe("videos and documents are spooled to disk", () => {
  it("a 120 MB document from a URL lands in a private file byte for byte, in little memory; released, nothing is left", async () => {
    const size = 120 * 1000 * 1000;
    const base = await server((_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(size) });
      pipeline(generatedStream(size), res).catch(() => undefined);
    });
    const memory = sampleMemory();
    const content: OutgoingContent = {
      type: "document",
      media: { url: `${base}/files/big.bin` },
      fileName: "big.bin",
      mimetype: "application/octet-stream",
    };
    const media = spooled(await prepareMedia(send(content), noEdge));
    const { rssGrowth, arrayBuffersGrowth } = memory.stop();
    console.info(
      `120 MB document spooled: rss grew at most ${(rssGrowth / MIB).toFixed(1)} MiB, arrayBuffers ${(arrayBuffersGrowth / MIB).toFixed(1)} MiB`,
    );
    expect(media).toMatchObject({ mimetype: "application/octet-stream", fileName: "big.bin" });
    expect(media.file.size).toBe(size);
    expect(path.dirname(path.dirname(media.file.path))).toBe(spoolRoot);
    // The dir is private to the bridge's user (mkdtemp: 0700).
    expect((await stat(path.dirname(media.file.path))).mode & 0o777).toBe(0o700);
    expect(await fileDigest(media.file.path)).toEqual(generatedDigest(size));
    expect(rssGrowth).toBeLessThan(size / 2);
    expect(arrayBuffersGrowth).toBeLessThan(size / 2);
    await releaseMedia(media);
    expect(await leftovers()).toEqual([]);
  }, 60_000);

  it("a 40 MB video uploaded to the edge is fetched with the bearer token and spooled, sniffed from its head", async () => {
    const edge = await startRecordingEdge();
    cleanup.push(() => edge.close());
    const head = await testVideo();
    const size = 40 * MIB + 3;
    edge.uploads.set("upload_video_1", {
      body: () => generatedStream(size, { head }),
      mimetype: "application/octet-stream",
      fileName: "clip 1.mp4",
    });
    const media = spooled(
      await prepareMedia(send({ type: "video", media: { upload: "upload_video_1" } }), {
        origin: edge.origin,
        token: edge.token,
        sessionId: "s/1",
      }),
    );
    expect(media).toMatchObject({ mimetype: "video/mp4", fileName: "clip 1.mp4" });
    expect(await fileDigest(media.file.path)).toEqual(generatedDigest(size, { head }));
    expect(edge.requests.map((r) => `${r.method} ${r.path} ${r.headers.authorization}`)).toEqual([
      `GET upload_video_1 Bearer ${edge.token}`,
    ]);
    await releaseMedia(media);
    expect(await leftovers()).toEqual([]);
  }, 60_000);

  it("over maxBytes: a declared length is refused before reading, an endless body once it passes; no file is left", async () => {
    let streamed = 0;
    const base = await server((req, res) => {
      if (req.url === "/declared.bin") {
        res.writeHead(200, { "content-length": String(30 * MIB) }).end();
        return;
      }
      res.writeHead(200, { "content-type": "video/mp4" });
      const source = generatedStream(200 * MIB);
      source.on("data", (chunk: Buffer) => {
        streamed += chunk.length;
      });
      pipeline(source, res).catch(() => undefined);
    });
    const document = (url: string): OutgoingContent => ({
      type: "document",
      media: { url },
      fileName: "x.bin",
      mimetype: "application/octet-stream",
    });
    const tooLarge = { status: 400, message: "media larger than 20 MiB" };
    expect(await refusal(prepareMedia(send(document(`${base}/declared.bin`), 20 * MIB), noEdge))).toEqual(
      tooLarge,
    );
    expect(await leftovers()).toEqual([]);
    expect(await refusal(prepareMedia(send(document(`${base}/endless.bin`), 20 * MIB), noEdge))).toEqual(
      tooLarge,
    );
    expect(await leftovers()).toEqual([]);
    // The bridge hung up early instead of reading the whole 200 MiB.
    expect(streamed).toBeLessThan(100 * MIB);
  }, 60_000);

  it("a video whose bytes are no video is refused (400) and its spooled file removed", async () => {
    const base = await server((_req, res) => {
      res.writeHead(200, { "content-type": "video/mp4" }).end(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]));
    });
    const refused = await refusal(
      prepareMedia(send({ type: "video", media: { url: `${base}/a.mp4` } }), noEdge),
    );
    expect(refused).toEqual({ status: 400, message: "video content is image/jpeg (declared video/mp4)" });
    expect(await leftovers()).toEqual([]);
  });

  it("images stay in memory: capped at 16 MiB even when the edge allows more", async () => {
    const base = await server((_req, res) => {
      res.writeHead(200, { "content-type": "image/png" });
      pipeline(generatedStream(17 * MIB), res).catch(() => undefined);
    });
    const image = send({ type: "image", media: { url: `${base}/big.png` } }, 64 * MIB);
    expect(await refusal(prepareMedia(image, noEdge))).toEqual({
      status: 400,
      message: "media larger than 16 MiB",
    });
    expect(await leftovers()).toEqual([]);
  });
});
