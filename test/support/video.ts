// A real video for tests: one second of ffmpeg's test pattern as MPEG-4, made with the same ffmpeg
// the bridge uses for video stickers (from the @ffmpeg-installer npm package).
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ffmpegPath } from "../../bridge/src/media/video-sticker.ts";

export async function testVideo(): Promise<Buffer> {
  const binary = ffmpegPath();
  if (!binary) throw new Error("ffmpeg is missing: npm ci installs @ffmpeg-installer/linux-x64");
  const dir = await mkdtemp(path.join(tmpdir(), "test-video-"));
  try {
    const out = path.join(dir, "clip.mp4");
    execFileSync(binary, [
      ...[
        "-hide_banner",
        "-loglevel",
        "error",
        "-f",
        "lavfi",
        "-i",
        "testsrc=duration=1:size=160x120:rate=10",
      ],
      ...["-c:v", "mpeg4", "-f", "mp4", out],
    ]);
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
