/**
 * Video → animated WebP for stickers, with ffmpeg. sharp cannot decode video, and Baileys sends what it
 * is given. ffmpeg comes from the `@ffmpeg-installer/<platform>` npm package (a static build with
 * libwebp) or from FFMPEG_PATH; without either, video stickers are refused with a clear reason.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { OperationError } from "../protocol/seam.ts";

/** WhatsApp plays animated stickers of a few seconds; longer clips are cut here. */
export const MAX_VIDEO_STICKER_SECONDS = 10;
const FFMPEG_TIMEOUT_MS = 60_000;

/** The ffmpeg binary to use, or null when this bridge has none. */
export function ffmpegPath(): string | null {
  if (process.env.FFMPEG_PATH) return process.env.FFMPEG_PATH;
  try {
    const require = createRequire(import.meta.url);
    return require.resolve(`@ffmpeg-installer/${process.platform}-${process.arch}/ffmpeg`);
  } catch {
    return null;
  }
}

function run(binary: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(binary, args, { timeout: FFMPEG_TIMEOUT_MS, maxBuffer: 1024 * 1024 }, (error, _out, stderr) => {
      if (error)
        reject(new Error(`ffmpeg failed: ${String(stderr).trim().split("\n").pop() ?? error.message}`));
      else resolve();
    });
  });
}

/** A 512×512 (letterboxed, transparent) animated WebP of at most `seconds` of the clip, 10 fps. */
export async function videoToAnimatedWebp(
  bytes: Uint8Array,
  quality: number,
  seconds: number,
): Promise<Uint8Array> {
  const binary = ffmpegPath();
  if (!binary) throw new OperationError(400, "video stickers need ffmpeg, which this bridge does not have");
  const dir = await mkdtemp(path.join(tmpdir(), "sticker-"));
  try {
    const input = path.join(dir, "in");
    const output = path.join(dir, "out.webp");
    await writeFile(input, bytes);
    const scale =
      "fps=10,scale=512:512:force_original_aspect_ratio=decrease," +
      "pad=512:512:(ow-iw)/2:(oh-ih)/2:color=0x00000000,format=yuva420p";
    try {
      await run(binary, [
        ...["-hide_banner", "-loglevel", "error", "-y", "-i", input],
        ...["-t", String(Math.min(seconds, MAX_VIDEO_STICKER_SECONDS)), "-an", "-vf", scale],
        ...["-c:v", "libwebp_anim", "-loop", "0", "-q:v", String(quality), "-f", "webp", output],
      ]);
    } catch (error) {
      throw new OperationError(400, error instanceof Error ? error.message.slice(0, 300) : "ffmpeg failed");
    }
    return new Uint8Array(await readFile(output));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
