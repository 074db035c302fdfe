/**
 * Stickers: WhatsApp shows only 512×512 WebP, and Baileys sends what it is given, so images are
 * converted here (sharp): letterboxed on a transparent canvas, animated GIF/WebP kept animated, and the
 * pack and author written into the WebP's EXIF (webp.ts) where WhatsApp reads them. Video becomes an
 * animated WebP through ffmpeg (video-sticker.ts).
 */
import { randomUUID } from "node:crypto";
import { sniffMimetype } from "../protocol/mime.ts";
import { type MediaBytes, OperationError } from "../protocol/seam.ts";
import { MAX_VIDEO_STICKER_SECONDS, videoToAnimatedWebp } from "./video-sticker.ts";
import { withStickerMetadata } from "./webp.ts";

export const STICKER_SIZE = 512;
/** WhatsApp refuses bigger stickers (static 100 KB, animated 500 KB); quality steps down to fit. */
const MAX_STATIC_BYTES = 100 * 1024;
const MAX_ANIMATED_BYTES = 500 * 1024;
const QUALITIES = [80, 60, 40, 25] as const;
/** Bounds decoding work: a "GIF" with thousands of frames would stall the bridge's event loop. */
const MAX_FRAMES = 300;

export interface StickerOptions {
  pack?: string | undefined;
  author?: string | undefined;
}

function isVideo(media: MediaBytes): boolean {
  const sniffed = sniffMimetype(media.bytes);
  return media.mimetype.startsWith("video/") || sniffed === "video/mp4";
}

export async function makeSticker(media: MediaBytes, options: StickerOptions): Promise<MediaBytes> {
  if (isVideo(media)) return withMetadata(await videoSticker(media), options);
  // Loaded on first use: a bridge that never makes a sticker never pays for the native module.
  const { default: sharp } = await import("sharp");
  const input = Buffer.from(media.bytes.buffer, media.bytes.byteOffset, media.bytes.byteLength);
  let pages: number;
  try {
    pages = (await sharp(input, { animated: true }).metadata()).pages ?? 1;
  } catch {
    throw new OperationError(400, "sticker source is not an image sharp can read");
  }
  if (pages > MAX_FRAMES) throw new OperationError(400, `animated sticker has over ${MAX_FRAMES} frames`);
  const animated = pages > 1;
  const limit = animated ? MAX_ANIMATED_BYTES : MAX_STATIC_BYTES;

  let webp: Uint8Array | null = null;
  for (const quality of QUALITIES) {
    webp = await sharp(input, { animated })
      .resize(STICKER_SIZE, STICKER_SIZE, { fit: "contain", background: { r: 0, g: 0, b: 0, alpha: 0 } })
      .webp({ quality, ...(animated ? { loop: 0 } : {}) })
      .toBuffer();
    if (webp.length <= limit) break;
  }
  if (!webp) throw new Error("sticker conversion produced nothing");
  return withMetadata(webp, options);
}

async function videoSticker(media: MediaBytes): Promise<Uint8Array> {
  let webp: Uint8Array | null = null;
  for (const quality of QUALITIES) {
    webp = await videoToAnimatedWebp(media.bytes, quality, MAX_VIDEO_STICKER_SECONDS);
    if (webp.length <= MAX_ANIMATED_BYTES) break;
  }
  if (!webp) throw new Error("sticker conversion produced nothing");
  return webp;
}

function withMetadata(webp: Uint8Array, options: StickerOptions): MediaBytes {
  const bytes = withStickerMetadata(webp, {
    "sticker-pack-id": randomUUID(),
    "sticker-pack-name": options.pack ?? "",
    "sticker-pack-publisher": options.author ?? "",
    emojis: [],
  });
  return { bytes, mimetype: "image/webp" };
}
