/** Stickers: 512×512 WebP via sharp, animated GIFs kept animated, pack/author in the WebP's EXIF. */
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { makeSticker } from "../../../bridge/src/media/sticker.ts";
import {
  isAnimatedWebp,
  readChunks,
  readStickerMetadata,
  VP8X_EXIF,
  vp8xFlags,
  withStickerMetadata,
} from "../../../bridge/src/media/webp.ts";
import { chooseMimetype, sniffMimetype } from "../../../bridge/src/protocol/mime.ts";
import { OperationError } from "../../../bridge/src/protocol/seam.ts";
import { testVideo } from "../../support/video.ts";

const ascii = (bytes: Uint8Array, from: number, to: number) =>
  Buffer.from(bytes.subarray(from, to)).toString("latin1");

const metadata = {
  "sticker-pack-id": "pack-1",
  "sticker-pack-name": "Switchboard ✓",
  "sticker-pack-publisher": "Bot",
  emojis: [],
};

function square(r: number, width = 40, height = 20) {
  return sharp({ create: { width, height, channels: 4, background: { r, g: 10, b: 10, alpha: 1 } } });
}

/** Checks the RIFF container byte for byte: sizes add up, VP8X first with the EXIF bit, EXIF last. */
function expectStickerContainer(webp: Uint8Array): void {
  expect(ascii(webp, 0, 4)).toBe("RIFF");
  expect(ascii(webp, 8, 12)).toBe("WEBP");
  expect(Buffer.from(webp).readUInt32LE(4)).toBe(webp.length - 8);
  expect(ascii(webp, 12, 16)).toBe("VP8X");
  expect((vp8xFlags(webp) ?? 0) & VP8X_EXIF).toBe(VP8X_EXIF);
  const chunks = readChunks(webp).map((chunk) => chunk.fourcc);
  expect(chunks.at(-1)).toBe("EXIF");
  expect(chunks.filter((fourcc) => fourcc === "EXIF")).toHaveLength(1);
}

describe("webp.ts", () => {
  it("turns a simple lossless WebP (VP8L) into VP8X + EXIF, keeping its canvas size and alpha", async () => {
    const simple = await square(200).webp({ lossless: true }).toBuffer();
    expect(ascii(simple, 12, 16)).toBe("VP8L");
    const out = withStickerMetadata(simple, metadata);
    expectStickerContainer(out);
    const header = readChunks(out)[0]?.data ?? new Uint8Array();
    expect(Buffer.from(header).readUIntLE(4, 3) + 1).toBe(40);
    expect(Buffer.from(header).readUIntLE(7, 3) + 1).toBe(20);
    expect(readStickerMetadata(out)).toEqual(metadata);
    // Still a WebP sharp (libwebp) decodes, at the same size.
    expect(await sharp(out).metadata()).toMatchObject({ format: "webp", width: 40, height: 20 });
  });

  it("turns a simple lossy WebP (VP8) into VP8X + EXIF", async () => {
    const simple = await square(100).flatten().webp({ quality: 50 }).toBuffer();
    expect(ascii(simple, 12, 16)).toBe("VP8 ");
    const out = withStickerMetadata(simple, metadata);
    expectStickerContainer(out);
    expect(await sharp(out).metadata()).toMatchObject({ format: "webp", width: 40, height: 20 });
  });

  it("writes the EXIF layout WhatsApp reads: II*, one IFD entry 0x5741 with the JSON at offset 22", async () => {
    const out = withStickerMetadata(await square(10).webp({ lossless: true }).toBuffer(), metadata);
    const exif = readChunks(out).find((chunk) => chunk.fourcc === "EXIF")?.data ?? new Uint8Array();
    const view = Buffer.from(exif);
    expect([...view.subarray(0, 8)]).toEqual([0x49, 0x49, 0x2a, 0x00, 0x08, 0x00, 0x00, 0x00]);
    expect(view.readUInt16LE(8)).toBe(1);
    expect(view.readUInt16LE(10)).toBe(0x5741);
    expect(view.readUInt16LE(12)).toBe(7);
    const length = view.readUInt32LE(14);
    expect(view.readUInt32LE(18)).toBe(22);
    expect(JSON.parse(view.subarray(22, 22 + length).toString("utf8"))).toEqual(metadata);
  });

  it("replaces an existing EXIF chunk instead of adding a second one", async () => {
    const once = withStickerMetadata(await square(10).webp().toBuffer(), metadata);
    const twice = withStickerMetadata(once, { ...metadata, "sticker-pack-name": "second" });
    expectStickerContainer(twice);
    expect(readStickerMetadata(twice)?.["sticker-pack-name"]).toBe("second");
  });

  it("refuses what is not a WebP", () => {
    expect(() => withStickerMetadata(Buffer.from("GIF89a...."), metadata)).toThrow(/not a WebP/);
  });
});

describe("stickers", () => {
  it("a PNG becomes a 512×512 static WebP with the pack and author", async () => {
    const png = await square(255).png().toBuffer();
    const sticker = await makeSticker(
      { bytes: png, mimetype: "image/png" },
      { pack: "My pack", author: "Me" },
    );
    expect(sticker.mimetype).toBe("image/webp");
    expectStickerContainer(sticker.bytes);
    expect(isAnimatedWebp(sticker.bytes)).toBe(false);
    expect(await sharp(sticker.bytes).metadata()).toMatchObject({ format: "webp", width: 512, height: 512 });
    expect(sticker.bytes.length).toBeLessThanOrEqual(100 * 1024);
    const json = readStickerMetadata(sticker.bytes);
    expect(json).toMatchObject({
      "sticker-pack-name": "My pack",
      "sticker-pack-publisher": "Me",
      emojis: [],
    });
    expect(json?.["sticker-pack-id"]).toEqual(expect.any(String));
    // Letterboxed, not stretched: the corners of a wide image are transparent.
    const { data } = await sharp(sticker.bytes).raw().toBuffer({ resolveWithObject: true });
    expect(data[3]).toBe(0);
  });

  it("an animated GIF becomes an animated 512×512 WebP", async () => {
    const frames = await Promise.all([square(255).png().toBuffer(), square(0).png().toBuffer()]);
    const gif = await sharp(frames, { join: { animated: true } })
      .gif({ delay: [100, 100] })
      .toBuffer();
    const sticker = await makeSticker({ bytes: gif, mimetype: "image/gif" }, {});
    expectStickerContainer(sticker.bytes);
    expect(isAnimatedWebp(sticker.bytes)).toBe(true);
    const meta = await sharp(sticker.bytes, { animated: true }).metadata();
    expect(meta).toMatchObject({ pages: 2, width: 512, pageHeight: 512 });
    expect(readStickerMetadata(sticker.bytes)).toMatchObject({
      "sticker-pack-name": "",
      "sticker-pack-publisher": "",
    });
  });

  it("turns a real video into an animated WebP sticker with its pack and author", async () => {
    const sticker = await makeSticker(
      { bytes: await testVideo(), mimetype: "video/mp4" },
      { pack: "Clips", author: "Cam" },
    );
    expect(sticker.mimetype).toBe("image/webp");
    expectStickerContainer(sticker.bytes);
    expect(Buffer.from(sticker.bytes).includes(Buffer.from("ANIM"))).toBe(true);
    expect(readStickerMetadata(sticker.bytes)).toMatchObject({
      "sticker-pack-name": "Clips",
      "sticker-pack-publisher": "Cam",
    });
  });

  it("refuses a video ffmpeg cannot read and bytes that are not an image, as 400s", async () => {
    const mp4 = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from("ftypisom"), Buffer.alloc(16)]);
    const video = makeSticker({ bytes: mp4, mimetype: "application/octet-stream" }, {});
    await expect(video).rejects.toBeInstanceOf(OperationError);
    await expect(video).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/ffmpeg/) });
    await expect(
      makeSticker({ bytes: Buffer.from("hello"), mimetype: "text/plain" }, {}),
    ).rejects.toMatchObject({
      status: 400,
    });
  });
});

describe("mime.ts", () => {
  it("sniffs the formats media arrives in", async () => {
    expect(sniffMimetype(await square(1).png().toBuffer())).toBe("image/png");
    expect(sniffMimetype(await square(1).jpeg().toBuffer())).toBe("image/jpeg");
    expect(sniffMimetype(await square(1).gif().toBuffer())).toBe("image/gif");
    expect(sniffMimetype(await square(1).webp().toBuffer())).toBe("image/webp");
    expect(sniffMimetype(Buffer.from("OggS\0\x02rest"))).toBe("audio/ogg");
    expect(sniffMimetype(Buffer.from("%PDF-1.7\n"))).toBe("application/pdf");
    expect(sniffMimetype(Buffer.from("\0\0\0\x18ftypmp42...."))).toBe("video/mp4");
    expect(sniffMimetype(Buffer.from("\0\0\0\x18ftypM4A ...."))).toBe("audio/mp4");
    expect(sniffMimetype(Buffer.from("plain text"))).toBeNull();
  });

  it("prefers a specific Content-Type, sniffs a vague or missing one", () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]);
    expect(chooseMimetype("image/png; charset=binary", png)).toBe("image/png");
    expect(chooseMimetype("application/octet-stream", png)).toBe("image/png");
    expect(chooseMimetype(null, png)).toBe("image/png");
    expect(chooseMimetype(null, Buffer.from("??"))).toBe("application/octet-stream");
    expect(chooseMimetype("Video/MP4", Buffer.from("??"))).toBe("video/mp4");
  });
});
