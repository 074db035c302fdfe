/**
 * Received media streamed to the edge (media/edge-upload.ts) against a real local HTTP server standing
 * in for the edge's media endpoints, recording every request: one PUT when the file fits a part, else
 * 8 MiB parts in order with their etags listed on completion; refusals abandon the upload (DELETE)
 * and stop the download; the cap is enforced while streaming; memory stays near one part.
 */
import { afterEach, describe, expect, it } from "vitest";
import { uploadToEdge } from "../../../bridge/src/media/edge-upload.ts";
import type { EdgeMedia } from "../../../bridge/src/media/media.ts";
import { MEDIA_PART_BYTES } from "../../../bridge/src/protocol/messaging.ts";
import { OperationError } from "../../../bridge/src/protocol/seam.ts";
import { generatedDigest, MIB, sampleMemory, trackedSource } from "../support/large-media.ts";
import { type RecordingEdge, startRecordingEdge } from "../support/recording-edge.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const UPLOAD_ID = "upload/1+α";

async function edgeForTest(): Promise<{ edge: RecordingEdge; media: EdgeMedia }> {
  const edge = await startRecordingEdge(UPLOAD_ID);
  cleanup.push(() => edge.close());
  return { edge, media: { origin: edge.origin, token: edge.token, sessionId: "s/1" } };
}

const DOCUMENT = { mimetype: "application/pdf", fileName: "big report 1.pdf" };

/** What reached the edge, one line per request: `<METHOD> <path> <size>`. */
const lines = (edge: RecordingEdge) => edge.requests.map((r) => `${r.method} ${r.path} ${r.size}`);

describe("downloads go to the edge as they stream", () => {
  it("a 40 MB+ download goes up in 8 MiB parts, in order, exact sizes; complete lists every etag", async () => {
    const { edge, media } = await edgeForTest();
    const size = 5 * MEDIA_PART_BYTES + 12_345;
    const { chunks, state } = trackedSource(size);
    const uploaded = await uploadToEdge(media, "dl_big_0001", { ...DOCUMENT, chunks }, 64 * MIB);
    expect(uploaded).toBe(size);
    expect(state.stopped).toBe(true);
    expect(lines(edge)).toEqual([
      "POST dl_big_0001/parts 0",
      ...[1, 2, 3, 4, 5].map((n) => `PUT dl_big_0001/parts/${n} ${MEDIA_PART_BYTES}`),
      "PUT dl_big_0001/parts/6 12345",
      expect.stringMatching(/^POST dl_big_0001\/parts\/complete \d+$/),
    ]);
    const [open, ...rest] = edge.requests;
    expect(open?.headers).toMatchObject({
      authorization: `Bearer ${edge.token}`,
      "content-type": "application/pdf",
      "x-file-name": encodeURIComponent("big report 1.pdf"),
    });
    // The id travels URI-encoded, and every part names it.
    expect(rest.map((request) => request.uploadId)).toEqual(new Array(7).fill(UPLOAD_ID));
    const complete = edge.requests.at(-1);
    const parts = edge.requests.slice(1, 7);
    expect(complete?.json).toEqual({
      parts: parts.map((part, i) => ({
        partNumber: i + 1,
        etag: `"etag-${i + 1}-${part.sha256.slice(0, 8)}"`,
      })),
    });
    expect(edge.stored("dl_big_0001")).toEqual(generatedDigest(size));
  }, 60_000);

  it("media that fits one part (up to exactly 8 MiB) is one PUT with its type and name", async () => {
    const { edge, media } = await edgeForTest();
    const small = trackedSource(1000);
    expect(await uploadToEdge(media, "dl_small_01", { ...DOCUMENT, chunks: small.chunks }, 16 * MIB)).toBe(
      1000,
    );
    const exact = trackedSource(MEDIA_PART_BYTES);
    const whole = { mimetype: "video/mp4", chunks: exact.chunks };
    expect(await uploadToEdge(media, "dl_exact_01", whole, 16 * MIB)).toBe(MEDIA_PART_BYTES);
    expect(lines(edge)).toEqual(["PUT dl_small_01 1000", `PUT dl_exact_01 ${MEDIA_PART_BYTES}`]);
    expect(edge.requests[0]?.headers).toMatchObject({
      "content-type": "application/pdf",
      "x-file-name": encodeURIComponent("big report 1.pdf"),
    });
    expect(edge.stored("dl_exact_01")).toEqual(generatedDigest(MEDIA_PART_BYTES));
  });

  it("an edge refusal of a part abandons the upload (DELETE) and stops the download", async () => {
    const { edge, media } = await edgeForTest();
    edge.refuse = (request) => (request.path.endsWith("/parts/3") ? 500 : undefined);
    const { chunks, state } = trackedSource(6 * MEDIA_PART_BYTES);
    await expect(uploadToEdge(media, "dl_fail_001", { ...DOCUMENT, chunks }, 64 * MIB)).rejects.toThrow(
      "the edge refused part 3: 500",
    );
    expect(state.stopped).toBe(true);
    expect(state.read).toBeLessThan(5 * MEDIA_PART_BYTES);
    expect(lines(edge)).toEqual([
      "POST dl_fail_001/parts 0",
      `PUT dl_fail_001/parts/1 ${MEDIA_PART_BYTES}`,
      `PUT dl_fail_001/parts/2 ${MEDIA_PART_BYTES}`,
      `PUT dl_fail_001/parts/3 ${MEDIA_PART_BYTES}`,
      "DELETE dl_fail_001/parts 0",
    ]);
    expect(edge.requests.at(-1)?.uploadId).toBe(UPLOAD_ID);
    expect(edge.stored("dl_fail_001")).toBeUndefined();
  });

  it("a download over the cap is refused with 400 naming the limit, the upload abandoned", async () => {
    const { edge, media } = await edgeForTest();
    const { chunks, state } = trackedSource(30 * MIB);
    const refused = await uploadToEdge(media, "dl_huge_001", { ...DOCUMENT, chunks }, 20 * MIB).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(OperationError);
    expect(refused).toMatchObject({ status: 400, message: "media larger than 20 MiB" });
    expect(state.stopped).toBe(true);
    expect(state.read).toBeLessThanOrEqual(21 * MIB);
    expect(lines(edge)).toEqual([
      "POST dl_huge_001/parts 0",
      `PUT dl_huge_001/parts/1 ${MEDIA_PART_BYTES}`,
      `PUT dl_huge_001/parts/2 ${MEDIA_PART_BYTES}`,
      "DELETE dl_huge_001/parts 0",
    ]);

    // Under one part: refused before anything reached the edge.
    const small = trackedSource(3 * MIB);
    const tiny = await uploadToEdge(
      media,
      "dl_huge_002",
      { ...DOCUMENT, chunks: small.chunks },
      2 * MIB,
    ).catch((error: unknown) => error);
    expect(tiny).toMatchObject({ status: 400, message: "media larger than 2 MiB" });
    expect(lines(edge)).toHaveLength(4);
  });

  it("a download that stalls fails after the stall timeout and abandons its upload", async () => {
    const { edge, media } = await edgeForTest();
    async function* stalling() {
      yield Buffer.alloc(MEDIA_PART_BYTES + 1, 1);
      await new Promise(() => undefined); // the connection died; Baileys' stream never ends
    }
    const started = Date.now();
    await expect(
      uploadToEdge(media, "dl_stall_01", { ...DOCUMENT, chunks: stalling() }, 64 * MIB, { stallMs: 300 }),
    ).rejects.toThrow("the media download stalled (nothing for 0.3 s)");
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(lines(edge)).toEqual([
      "POST dl_stall_01/parts 0",
      `PUT dl_stall_01/parts/1 ${MEDIA_PART_BYTES}`,
      "DELETE dl_stall_01/parts 0",
    ]);
  });

  it("a 200 MB download moves through about one part of memory", async () => {
    const { edge, media } = await edgeForTest();
    const size = 200 * 1000 * 1000;
    const { chunks } = trackedSource(size, { chunkBytes: 64 * 1024 });
    const memory = sampleMemory();
    expect(await uploadToEdge(media, "dl_mem_0001", { ...DOCUMENT, chunks }, 256 * MIB)).toBe(size);
    const { rssGrowth, arrayBuffersGrowth } = memory.stop();
    console.info(
      `200 MB download: rss grew at most ${(rssGrowth / MIB).toFixed(1)} MiB, arrayBuffers ${(arrayBuffersGrowth / MIB).toFixed(1)} MiB`,
    );
    expect(lines(edge)).toHaveLength(1 + Math.ceil(size / MEDIA_PART_BYTES) + 1);
    expect(edge.stored("dl_mem_0001")).toEqual(generatedDigest(size, { chunkBytes: 64 * 1024 }));
    // Generous bounds: the whole file is 190 MiB. What is live at the worst moment is the part being
    // cut, the one in flight (and fetch's copy of it) and, in this process, the fake edge's side of it.
    expect(arrayBuffersGrowth).toBeLessThan(size / 2);
    expect(rssGrowth).toBeLessThan(size / 2);
  }, 120_000);
});
