/**
 * Media in and out of the bridge against real local HTTP servers: URL sources, uploads held by a fake
 * edge (bearer token checked), the 16 MiB cap while streaming, and downloads PUT back to the edge.
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type EdgeMedia, fetchMedia, httpOrigin, prepareMedia } from "../../../bridge/src/media/media.ts";
import { releaseMedia } from "../../../bridge/src/media/spool.ts";
import { readStickerMetadata } from "../../../bridge/src/media/webp.ts";
import { MEDIA_MEMORY_MAX_BYTES, type OutgoingContent } from "../../../bridge/src/protocol/messaging.ts";
import { isOggOpus } from "../../../bridge/src/protocol/mime.ts";
import type { Operation } from "../../../bridge/src/protocol/operations.ts";
import { OperationError } from "../../../bridge/src/protocol/seam.ts";
import { ADDRESS_CASES, urlOf } from "../../support/address-cases.ts";
import { audioSeconds, testAudio, testVideo } from "../../support/video.ts";
import { startFakeEdge } from "../support/fake-edge.ts";
import { localServer } from "../support/local-server.ts";
import { heldBytes } from "../support/media-bytes.ts";

let cleanup: Array<() => Promise<void>> = [];
// The test servers live on 127.0.0.1, which production bridges refuse to fetch from (see below).
beforeEach(() => {
  process.env.MEDIA_ALLOW_PRIVATE = "1";
});
afterEach(async () => {
  delete process.env.MEDIA_ALLOW_PRIVATE;
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function server(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const local = await localServer(handler);
  cleanup.push(local.close);
  return local.origin;
}

async function edge(): Promise<{ fake: Awaited<ReturnType<typeof startFakeEdge>>; media: EdgeMedia }> {
  const fake = await startFakeEdge();
  cleanup.push(() => fake.close());
  return { fake, media: { origin: fake.url, token: fake.token, sessionId: "s/1" } };
}

const noEdge: EdgeMedia = { origin: "http://127.0.0.1:9", token: "t", sessionId: "s" };

async function refusal(promise: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OperationError) return { status: error.status, message: error.message };
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("media URLs must be public", () => {
  it("refuses URLs on private addresses with 400; redirects are followed hop by hop", async () => {
    const inside = await server((_req, res) => res.writeHead(200, { "content-type": "image/png" }).end("x"));
    const redirect = await server((_req, res) => res.writeHead(302, { location: `${inside}/secret` }).end());
    delete process.env.MEDIA_ALLOW_PRIVATE;
    expect(await refusal(fetchMedia({ url: `${inside}/a.png` }, noEdge))).toEqual({
      status: 400,
      message: "could not fetch media: 127.0.0.1 is a private address",
    });
    expect(
      (await refusal(fetchMedia({ url: "http://169.254.169.254/latest/meta-data" }, noEdge))).status,
    ).toBe(400);
    expect((await refusal(fetchMedia({ url: "http://localhost:9/x" }, noEdge))).message).toBe(
      "could not fetch media: localhost is not a public host name",
    );
    process.env.MEDIA_ALLOW_PRIVATE = "1";
    const followed = await fetchMedia({ url: `${redirect}/go` }, noEdge);
    expect(Buffer.from(followed.bytes).toString()).toBe("x");
  });

  it("refuses every private form of the shared address table as a URL host (400, nothing reached)", async () => {
    let requests = 0;
    const inside = await server((_req, res) => {
      requests++;
      res.writeHead(200, { "content-type": "image/png" }).end("x");
    });
    delete process.env.MEDIA_ALLOW_PRIVATE;
    for (const entry of ADDRESS_CASES.filter((candidate) => candidate.private)) {
      const url = urlOf(entry.address);
      if (url === null) continue; // a zone id: no URL can carry it
      const target = new URL(url);
      // The test server's port: were the guard to let a loopback form through, the request would land.
      target.port = new URL(inside).port;
      target.pathname = "/a.png";
      const host = target.hostname.replace(/^\[|\]$/g, "");
      expect(await refusal(fetchMedia({ url: target.href }, noEdge)), entry.why).toEqual({
        status: 400,
        message: `could not fetch media: ${host} is a private address`,
      });
    }
    expect(requests).toBe(0);
  });
});

describe("media", () => {
  it("maps the edge's ws(s) URL to its http(s) origin", () => {
    expect(httpOrigin("ws://127.0.0.1:8787")).toBe("http://127.0.0.1:8787");
    expect(httpOrigin("wss://edge.example/prefix/")).toBe("https://edge.example/prefix");
  });

  it("fetches a URL source: Content-Type when given, sniffed when vague, file name from the path", async () => {
    const png = await sharp({ create: { width: 2, height: 2, channels: 3, background: "red" } })
      .png()
      .toBuffer();
    const base = await server((req, res) => {
      if (req.url === "/typed/report.pdf")
        res.writeHead(200, { "content-type": "application/pdf" }).end("%PDF-1.4");
      else res.writeHead(200, { "content-type": "application/octet-stream" }).end(png);
    });
    const typed = await fetchMedia({ url: `${base}/typed/report.pdf` }, noEdge);
    expect(typed).toMatchObject({ mimetype: "application/pdf", fileName: "report.pdf" });
    expect(Buffer.from(typed.bytes).toString()).toBe("%PDF-1.4");
    const sniffed = await fetchMedia({ url: `${base}/image` }, noEdge);
    expect(sniffed.mimetype).toBe("image/png");
    expect(sniffed.fileName).toBeUndefined();
    expect(Buffer.compare(Buffer.from(sniffed.bytes), png)).toBe(0);
  });

  it("refuses a failed fetch as 400 'could not fetch media: <status>'", async () => {
    const base = await server((_req, res) => res.writeHead(404).end("nope"));
    expect(await refusal(fetchMedia({ url: `${base}/missing.png` }, noEdge))).toEqual({
      status: 400,
      message: "could not fetch media: 404",
    });
    const closed = await refusal(fetchMedia({ url: "http://127.0.0.1:9/x.png" }, noEdge));
    expect(closed.status).toBe(400);
    expect(closed.message).toMatch(/^could not fetch media: /);
  });

  it("stops reading past 16 MiB, with or without a Content-Length, and refuses with 400", async () => {
    const chunk = Buffer.alloc(1024 * 1024, 7);
    let streamed = 0;
    let closedAt = -1;
    const base = await server((req, res) => {
      if (req.url === "/declared") {
        res.writeHead(200, { "content-length": String(MEDIA_MEMORY_MAX_BYTES + 1) }).end();
        return;
      }
      // No Content-Length: the body just keeps coming until the client hangs up.
      res.writeHead(200, { "content-type": "video/mp4" });
      const pump = () => {
        while (streamed < 64 * chunk.length) {
          streamed += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      res.on("close", () => {
        closedAt = streamed;
        streamed = Number.POSITIVE_INFINITY;
      });
      pump();
    });
    const tooLarge = { status: 400, message: "media larger than 16 MiB" };
    expect(await refusal(fetchMedia({ url: `${base}/declared` }, noEdge))).toEqual(tooLarge);
    expect(await refusal(fetchMedia({ url: `${base}/endless` }, noEdge))).toEqual(tooLarge);
    // The bridge hung up early instead of reading the whole 64 MiB.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closedAt).toBeGreaterThan(0);
    expect(closedAt).toBeLessThan(32 * chunk.length);
  });

  it("fetches an upload from the edge with the bearer token, type and (URI-encoded) file name", async () => {
    const { fake, media } = await edge();
    fake.media.set("s/1/upload_ref_1", {
      bytes: Buffer.from("hello"),
      mimetype: "text/plain",
      fileName: "grüße 1.txt",
    });
    const fetched = await fetchMedia({ upload: "upload_ref_1" }, media);
    expect(fetched).toMatchObject({ mimetype: "text/plain", fileName: "grüße 1.txt" });
    expect(Buffer.from(fetched.bytes).toString()).toBe("hello");
    expect(await refusal(fetchMedia({ upload: "missing_ref" }, media))).toEqual({
      status: 400,
      message: "could not fetch media: 404",
    });
    expect(await refusal(fetchMedia({ upload: "upload_ref_1" }, { ...media, token: "wrong" }))).toEqual({
      status: 400,
      message: "could not fetch media: 401",
    });
    expect(fake.mediaRequests).toEqual([
      "GET s/1/upload_ref_1 200",
      "GET s/1/missing_ref 404",
      "GET s/1/upload_ref_1 401",
    ]);
  });

  it("prepares what an operation sends: voice notes as ogg/opus, documents as declared, stickers as WebP", async () => {
    const { fake, media } = await edge();
    const ogg = await testAudio("opus");
    const png = await sharp({ create: { width: 8, height: 8, channels: 4, background: "blue" } })
      .png()
      .toBuffer();
    fake.media.set("s/1/voice_ref_1", { bytes: ogg, mimetype: "application/octet-stream" });
    fake.media.set("s/1/image_ref_1", { bytes: png, mimetype: "image/png", fileName: "dot.png" });
    const send = (content: OutgoingContent): Operation => ({
      op: "send",
      to: "491511234567@s.whatsapp.net",
      messageId: "MSG00000001",
      content,
    });

    const voice = await prepareMedia(
      send({ type: "audio", ptt: true, media: { upload: "voice_ref_1" } }),
      media,
    );
    expect(voice?.mimetype).toBe("audio/ogg; codecs=opus");
    const music = await prepareMedia(
      send({ type: "audio", ptt: false, media: { upload: "voice_ref_1" } }),
      media,
    );
    expect(music?.mimetype).toBe("audio/ogg");
    const doc = await prepareMedia(
      send({
        type: "document",
        media: { upload: "image_ref_1" },
        fileName: "x.bin",
        mimetype: "application/x-thing",
      }),
      media,
    );
    expect(doc).toMatchObject({ mimetype: "application/x-thing", fileName: "x.bin" });
    // A document is spooled to disk, whatever its size; the file goes once the operation is over.
    expect(doc && "file" in doc ? doc.file.size : -1).toBe(png.length);
    expect((await heldBytes(doc)).equals(png)).toBe(true);
    await releaseMedia(doc);
    const sticker = await prepareMedia(
      send({ type: "sticker", media: { upload: "image_ref_1" }, pack: "P", author: "A" }),
      media,
    );
    expect(sticker?.mimetype).toBe("image/webp");
    expect(readStickerMetadata(await heldBytes(sticker))).toMatchObject({
      "sticker-pack-name": "P",
      "sticker-pack-publisher": "A",
    });
    const picture = await prepareMedia({ op: "picture.set", source: { upload: "image_ref_1" } }, media);
    expect(
      createHash("sha256")
        .update(await heldBytes(picture))
        .digest("hex"),
    ).toBe(createHash("sha256").update(png).digest("hex"));
    expect(await prepareMedia(send({ type: "text", text: "hi" }), media)).toBeNull();
    expect(await prepareMedia({ op: "profile.get" }, media)).toBeNull();
  });
});

describe("media is what its content says, and voice notes play", () => {
  const send = (content: OutgoingContent): Operation => ({
    op: "send",
    to: "491511234567@s.whatsapp.net",
    messageId: "MSG00000002",
    content,
  });
  const upload = (upload: string) => ({ upload });

  it("converts a voice note to mono Ogg/Opus of the same length, and keeps one that already is", async () => {
    const { fake, media } = await edge();
    const dir = await mkdtemp(path.join(tmpdir(), "voice-"));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const opus = await testAudio("opus");
    fake.media.set("s/1/wav", { bytes: await testAudio("wav"), mimetype: "audio/wav" });
    fake.media.set("s/1/mp3", { bytes: await testAudio("mp3"), mimetype: "audio/mpeg" });
    fake.media.set("s/1/vorbis", { bytes: await testAudio("vorbis"), mimetype: "audio/ogg" });
    fake.media.set("s/1/opus", { bytes: opus, mimetype: "application/octet-stream" });
    for (const ref of ["wav", "mp3", "vorbis"]) {
      const voice = await prepareMedia(send({ type: "audio", ptt: true, media: upload(ref) }), media);
      expect(voice?.mimetype, ref).toBe("audio/ogg; codecs=opus");
      const bytes = await heldBytes(voice);
      expect(isOggOpus(bytes), ref).toBe(true);
      expect(audioSeconds(bytes, dir), ref).toBeCloseTo(1, 0);
    }
    const kept = await prepareMedia(send({ type: "audio", ptt: true, media: upload("opus") }), media);
    expect((await heldBytes(kept)).equals(opus)).toBe(true);
  });

  it("refuses a voice note ffmpeg cannot decode with 400 naming ffmpeg's reason", async () => {
    const { fake, media } = await edge();
    fake.media.set("s/1/junk", { bytes: Buffer.from("not audio at all"), mimetype: "audio/ogg" });
    const refused = await refusal(
      prepareMedia(send({ type: "audio", ptt: true, media: upload("junk") }), media),
    );
    expect(refused.status).toBe(400);
    expect(refused.message).toMatch(/^ffmpeg failed/);
  });

  it("refuses a JPEG sent as a video, a video as an image and an image as audio (400)", async () => {
    const { fake, media } = await edge();
    const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: "red" } })
      .jpeg()
      .toBuffer();
    fake.media.set("s/1/jpeg-as-video", { bytes: jpeg, mimetype: "video/mp4" });
    fake.media.set("s/1/video-as-image", { bytes: await testVideo(), mimetype: "image/jpeg" });
    fake.media.set("s/1/jpeg-as-audio", { bytes: jpeg, mimetype: "audio/mpeg" });
    fake.media.set("s/1/text-as-image", { bytes: Buffer.from("hello"), mimetype: "image/png" });
    const cases: Array<[OutgoingContent, RegExp]> = [
      [
        { type: "video", media: upload("jpeg-as-video") },
        /^video content is image\/jpeg \(declared video\/mp4\)/,
      ],
      [{ type: "image", media: upload("video-as-image") }, /^image content is video\/mp4/],
      [{ type: "audio", ptt: false, media: upload("jpeg-as-audio") }, /^audio content is image\/jpeg/],
      [{ type: "image", media: upload("text-as-image") }, /^image content is not a known media format/],
    ];
    for (const [content, message] of cases) {
      const refused = await refusal(prepareMedia(send(content), media));
      expect(refused, content.type).toEqual({ status: 400, message: expect.stringMatching(message) });
    }
  });

  it("sends what the bytes are when the declared type is wrong but of the right kind", async () => {
    const { fake, media } = await edge();
    const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: "red" } })
      .jpeg()
      .toBuffer();
    fake.media.set("s/1/jpeg-as-png", { bytes: jpeg, mimetype: "image/png" });
    fake.media.set("s/1/mp3-as-wav", { bytes: await testAudio("mp3"), mimetype: "audio/wav" });
    const image = await prepareMedia(send({ type: "image", media: upload("jpeg-as-png") }), media);
    expect(image?.mimetype).toBe("image/jpeg");
    const music = await prepareMedia(send({ type: "audio", ptt: false, media: upload("mp3-as-wav") }), media);
    expect(music?.mimetype).toBe("audio/mpeg");
  });

  it("gives a video a JPEG preview of its first frame, and sends one ffmpeg cannot read without", async () => {
    const { fake, media } = await edge();
    const video = await testVideo();
    fake.media.set("s/1/clip", { bytes: video, mimetype: "video/mp4" });
    const prepared = await prepareMedia(send({ type: "video", media: upload("clip") }), media);
    expect((await heldBytes(prepared)).equals(video)).toBe(true);
    await releaseMedia(prepared);
    const preview = await sharp(prepared?.thumbnail ?? new Uint8Array()).metadata();
    expect(preview).toMatchObject({ format: "jpeg", width: 32, height: 24 });

    // An MP4 header on bytes that are no video: sniffed as video, no frame to show.
    const broken = Buffer.concat([video.subarray(0, 32), Buffer.alloc(64)]);
    fake.media.set("s/1/broken", { bytes: broken, mimetype: "video/mp4" });
    const unreadable = await prepareMedia(send({ type: "video", media: upload("broken") }), media);
    expect(unreadable?.mimetype).toBe("video/mp4");
    expect(unreadable?.thumbnail).toBeUndefined();
    await releaseMedia(unreadable);
  });

  it("gives a voice note the 64-bar waveform a phone draws, loudest bar 100", async () => {
    const { fake, media } = await edge();
    fake.media.set("s/1/tone", { bytes: await testAudio("opus"), mimetype: "audio/ogg" });
    const voice = await prepareMedia(send({ type: "audio", ptt: true, media: upload("tone") }), media);
    const bars = [...(voice?.waveform ?? [])];
    expect(bars).toHaveLength(64);
    expect(Math.max(...bars)).toBe(100);
    // A steady tone: every stretch about as loud as the loudest (the codec's start may be quieter).
    expect(bars.slice(4).every((bar) => bar >= 80)).toBe(true);
    const music = await prepareMedia(send({ type: "audio", ptt: false, media: upload("tone") }), media);
    expect(music?.waveform).toBeUndefined();
  });
});
