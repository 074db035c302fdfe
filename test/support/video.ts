// Real media for tests, made with the same ffmpeg the bridge uses (from the @ffmpeg-installer npm
// package): one second of ffmpeg's test pattern as MPEG-4, and one second of a tone as audio.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ffmpegPath } from "../../bridge/src/media/ffmpeg.ts";

async function ffmpegOutput(input: string[], output: string[], name: string): Promise<Buffer> {
  const binary = ffmpegPath();
  if (!binary) throw new Error("ffmpeg is missing: npm ci installs @ffmpeg-installer/linux-x64");
  const dir = await mkdtemp(path.join(tmpdir(), "test-media-"));
  try {
    const out = path.join(dir, name);
    execFileSync(binary, [
      "-hide_banner",
      "-loglevel",
      "error",
      "-f",
      "lavfi",
      "-i",
      ...input,
      ...output,
      out,
    ]);
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const testVideo = (): Promise<Buffer> =>
  ffmpegOutput(["testsrc=duration=1:size=160x120:rate=10"], ["-c:v", "mpeg4", "-f", "mp4"], "clip.mp4");

const AUDIO_OUTPUT = {
  wav: ["-c:a", "pcm_s16le", "-f", "wav"],
  mp3: ["-c:a", "libmp3lame", "-f", "mp3"],
  opus: ["-c:a", "libopus", "-f", "ogg"],
  vorbis: ["-c:a", "libvorbis", "-f", "ogg"],
} as const;

export const testAudio = (format: keyof typeof AUDIO_OUTPUT): Promise<Buffer> =>
  ffmpegOutput(["sine=frequency=440:duration=1"], [...AUDIO_OUTPUT[format]], `tone.${format}`);

/** How long ffmpeg says the audio plays, in seconds (it prints the duration of what it reads). */
export function audioSeconds(bytes: Uint8Array, dir: string): number {
  const binary = ffmpegPath() ?? "ffmpeg";
  const file = path.join(dir, `probe-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, bytes);
  let stderr = "";
  try {
    execFileSync(binary, ["-hide_banner", "-i", file], { stdio: ["ignore", "ignore", "pipe"] });
  } catch (error) {
    stderr = String((error as { stderr?: Buffer }).stderr ?? "");
  }
  const match = /Duration: (\d+):(\d+):(\d+\.\d+)/.exec(stderr);
  return match ? Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3]) : Number.NaN;
}
