/**
 * ffmpeg for the media conversions sharp cannot do (video stickers, voice notes). It comes from the
 * `@ffmpeg-installer/<platform>` npm package (a static build with libwebp and libopus) or from
 * FFMPEG_PATH; without either, the conversions that need it are refused with a clear reason.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { OperationError } from "../protocol/seam.ts";

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

/**
 * Runs ffmpeg on `bytes` (written to a private temp dir as the input) and returns the output file.
 * `outputArgs` come after `-i <input>` and before the output path. Failures are the caller's 400:
 * ffmpeg only fails here on input it cannot decode. `purpose` names the feature in that message.
 */
export function convertWithFfmpeg(
  bytes: Uint8Array,
  outputArgs: readonly string[],
  outputName: string,
  purpose: string,
): Promise<Uint8Array> {
  return convertFileWithFfmpeg({ bytes }, outputArgs, outputName, purpose);
}

/**
 * The same for input already on disk (`path`, a spooled video): ffmpeg reads what it needs of the file
 * itself, so a large video never passes through the bridge's memory.
 */
export async function convertFileWithFfmpeg(
  input: { bytes: Uint8Array } | { path: string },
  outputArgs: readonly string[],
  outputName: string,
  purpose: string,
): Promise<Uint8Array> {
  const binary = ffmpegPath();
  if (!binary) throw new OperationError(400, `${purpose} need ffmpeg, which this bridge does not have`);
  const dir = await mkdtemp(path.join(tmpdir(), "media-"));
  try {
    const inputPath = "path" in input ? input.path : path.join(dir, "in");
    if ("bytes" in input) await writeFile(inputPath, input.bytes);
    const output = path.join(dir, outputName);
    try {
      await run(binary, ["-hide_banner", "-loglevel", "error", "-y", "-i", inputPath, ...outputArgs, output]);
    } catch (error) {
      throw new OperationError(400, error instanceof Error ? error.message.slice(0, 300) : "ffmpeg failed");
    }
    return new Uint8Array(await readFile(output));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
