/**
 * Media at WhatsApp's size through the bridge's own session code on real Baileys, against the fake
 * WhatsApp (its media host keeps files on disk) and a fake edge: a large document the edge sends by URL
 * is spooled, encrypted and uploaded from disk and reaches the contact byte for byte, with nothing left
 * in the temp dir and the bridge's memory far below the file's size; a contact's large video is
 * streamed to the edge in 8 MiB parts by `media.download`.
 */
import { createHash } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../bridge/src/protocol/link.ts";
import { MEDIA_PART_BYTES } from "../../../bridge/src/protocol/messaging.ts";
import { FakeContact } from "../../fake-whatsapp/contact.ts";
import { testVideo } from "../../support/video.ts";
import type { FakeEdge } from "../support/fake-edge.ts";
import { generatedDigest, generatedStream, MIB, sampleMemory } from "../support/large-media.ts";
import { waitFor } from "../support/wait.ts";
import { linkedBridge as linkTo, storedEvents } from "./linked-bridge.ts";

const SESSION = "big1";
const originalTmp = process.env.TMPDIR;

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  delete process.env.MEDIA_ALLOW_PRIVATE;
  if (originalTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = originalTmp;
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const stored = <K extends SessionEvent["kind"]>(edge: FakeEdge, kind: K) => storedEvents(edge, SESSION, kind);

/**
 * From here on temp files (the bridge's spool, Baileys' encrypted copy, ffmpeg's) go to a fresh dir,
 * so whatever the send leaves behind shows. The fake hosts made theirs before this.
 */
async function watchedTmp(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "large-media-"));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  process.env.TMPDIR = dir;
  return dir;
}

/** A caller's server with one large generated file (the bridge may fetch 127.0.0.1 in tests only). */
async function fileServer(size: number): Promise<string> {
  const http = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/zip", "content-length": String(size) });
    pipeline(generatedStream(size), res).catch(() => undefined);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  cleanup.push(() => new Promise<void>((resolve) => http.close(() => resolve())));
  process.env.MEDIA_ALLOW_PRIVATE = "1";
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
}

/** Waits until the bridge reported a contact's message (its Signal session with the contact is up). */
async function said(edge: FakeEdge, sending: Promise<{ id: string }>): Promise<void> {
  const { id } = await sending;
  await waitFor(
    () => stored(edge, "message").some(({ message }) => message.id === id),
    `event ${id}`,
    10_000,
  );
}

describe("media at WhatsApp's size on real Baileys", () => {
  it("a 150 MB document sent by URL reaches the contact byte for byte; spooled and uploaded from disk, nothing left, little memory", async () => {
    const { whatsapp, edge, device } = await linkTo(cleanup, { session: SESSION, media: true });
    const hana = new FakeContact(whatsapp, "4915550003333", "Hana");
    await said(edge, hana.sendText(device, "send the archive"));
    const size = 150 * 1000 * 1000;
    const base = await fileServer(size);
    const tmp = await watchedTmp();
    // Sampled less often than in the unit tests: each sample is a full collection of a large heap.
    const memory = sampleMemory(250);
    const result = await edge.command(SESSION, "wa", {
      op: "send",
      to: hana.jid,
      messageId: "OUT-BIG-DOC-1",
      content: {
        type: "document",
        media: { url: `${base}/archive.zip` },
        fileName: "archive.zip",
        mimetype: "application/zip",
      },
    });
    const { rssGrowth, arrayBuffersGrowth } = memory.stop();
    console.info(
      `150 MB document sent: rss grew at most ${(rssGrowth / MIB).toFixed(1)} MiB, arrayBuffers ${(arrayBuffersGrowth / MIB).toFixed(1)} MiB`,
    );
    expect(result).toMatchObject({ ok: true, data: { id: "OUT-BIG-DOC-1" } });
    expect(await readdir(tmp)).toEqual([]);

    const received = await waitFor(
      () => hana.inbox.find((message) => message.id === "OUT-BIG-DOC-1"),
      "the document at Hana's",
      30_000,
    );
    const document = received.message.documentMessage;
    const media = whatsapp.messaging.media;
    if (!document || !media) throw new Error("no document message");
    expect(document).toMatchObject({ fileName: "archive.zip", mimetype: "application/zip" });
    expect(Number(document.fileLength)).toBe(size);
    expect(await media.decryptedDigest(document, "document")).toEqual(generatedDigest(size));
    // The bridge (and Baileys) never held the file: far below its size, whatever the GC's timing.
    expect(rssGrowth).toBeLessThan(size / 2);
    expect(arrayBuffersGrowth).toBeLessThan(size / 2);
  }, 120_000);

  it("a 30 MB video uploaded to the edge reaches the contact byte for byte, with a preview made from the spooled file", async () => {
    const { whatsapp, edge, device } = await linkTo(cleanup, { session: SESSION, media: true });
    const jana = new FakeContact(whatsapp, "4915550005544", "Jana");
    await said(edge, jana.sendText(device, "the clip?"));
    const head = await testVideo();
    const size = 30 * MIB + 1;
    const chunks: Buffer[] = [];
    for await (const chunk of generatedStream(size, { head })) chunks.push(chunk as Buffer);
    edge.media.set(`${SESSION}/upload_video_01`, { bytes: Buffer.concat(chunks), mimetype: "video/mp4" });
    const tmp = await watchedTmp();
    const result = await edge.command(SESSION, "wa", {
      op: "send",
      to: jana.jid,
      messageId: "OUT-BIG-VID-1",
      content: { type: "video", media: { upload: "upload_video_01" }, caption: "clip" },
    });
    expect(result).toMatchObject({ ok: true, data: { id: "OUT-BIG-VID-1" } });
    expect(await readdir(tmp)).toEqual([]);
    const received = await waitFor(
      () => jana.inbox.find((message) => message.id === "OUT-BIG-VID-1"),
      "the video at Jana's",
      30_000,
    );
    const video = received.message.videoMessage;
    const media = whatsapp.messaging.media;
    if (!video || !media) throw new Error("no video message");
    expect(video).toMatchObject({ caption: "clip", mimetype: "video/mp4" });
    expect(video.jpegThumbnail?.length ?? 0).toBeGreaterThan(0);
    expect(await media.decryptedDigest(video, "video")).toEqual(generatedDigest(size, { head }));
  }, 120_000);

  it("a contact's 40 MB video arrives as a message; media.download streams it to the edge in 8 MiB parts, byte for byte", async () => {
    const { whatsapp, edge, device } = await linkTo(cleanup, { session: SESSION, media: true });
    const ivan = new FakeContact(whatsapp, "4915550004444", "Ivan");
    const head = await testVideo();
    const size = 40 * MIB + 5;
    const sent = await ivan.sendLargeFile(device, "video", generatedStream(size, { head }), {
      mimetype: "video/mp4",
      caption: "the whole match",
    });
    const event = await waitFor(
      () => stored(edge, "message").find(({ message }) => message.id === sent.id),
      "the video event",
      20_000,
    );
    const expected = generatedDigest(size, { head });
    expect(event.message.content).toMatchObject({
      type: "video",
      caption: "the whole match",
      media: { mimetype: "video/mp4", size, sha256: expected.sha256 },
    });

    const { quotedId: _q, pushName: _p, status: _s, ...ref } = event.message;
    const download = await edge.command(SESSION, "wa", {
      op: "media.download",
      message: ref,
      ref: "dl_video_0001",
    });
    expect(download).toMatchObject({ ok: true, data: { mimetype: "video/mp4", size } });
    const parts = Math.ceil(size / MEDIA_PART_BYTES);
    expect(edge.mediaRequests).toEqual([
      `POST ${SESSION}/dl_video_0001/parts 200`,
      ...Array.from({ length: parts }, (_, i) => `PUT ${SESSION}/dl_video_0001/parts/${i + 1} 200`),
      `POST ${SESSION}/dl_video_0001/parts/complete 204`,
    ]);
    const file = edge.media.get(`${SESSION}/dl_video_0001`);
    expect(file?.mimetype).toBe("video/mp4");
    expect(
      createHash("sha256")
        .update(file?.bytes ?? Buffer.alloc(0))
        .digest("hex"),
    ).toBe(expected.sha256);

    // The edge's limit for the kind, smaller than the file: refused before anything is fetched.
    const refused = await edge.command(SESSION, "wa", {
      op: "media.download",
      message: ref,
      ref: "dl_video_0002",
      maxBytes: 16 * MIB,
    });
    expect(refused).toMatchObject({ ok: false, status: 400, error: "media larger than 16 MiB" });
    expect(edge.mediaRequests).toHaveLength(parts + 2);
  }, 120_000);
});
