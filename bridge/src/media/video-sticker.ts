/**
 * Video → animated WebP for stickers, with ffmpeg (ffmpeg.ts). sharp cannot decode video, and Baileys
 * sends what it is given.
 */
import { convertWithFfmpeg } from "./ffmpeg.ts";

/** WhatsApp plays animated stickers of a few seconds; longer clips are cut here. */
export const MAX_VIDEO_STICKER_SECONDS = 10;

/** A 512×512 (letterboxed, transparent) animated WebP of at most `seconds` of the clip, 10 fps. */
export function videoToAnimatedWebp(
  bytes: Uint8Array,
  quality: number,
  seconds: number,
): Promise<Uint8Array> {
  const scale =
    "fps=10,scale=512:512:force_original_aspect_ratio=decrease," +
    "pad=512:512:(ow-iw)/2:(oh-ih)/2:color=0x00000000,format=yuva420p";
  return convertWithFfmpeg(
    bytes,
    [
      ...["-t", String(Math.min(seconds, MAX_VIDEO_STICKER_SECONDS)), "-an", "-vf", scale],
      ...["-c:v", "libwebp_anim", "-loop", "0", "-q:v", String(quality), "-f", "webp"],
    ],
    "out.webp",
    "video stickers",
  );
}
