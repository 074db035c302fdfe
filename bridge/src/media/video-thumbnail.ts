/**
 * The preview a phone shows for a video before it downloads it: a small JPEG of the first frame, in the
 * message (`jpegThumbnail`). Baileys makes one only by running `ffmpeg` from the PATH and, when that
 * fails, sends the video without one (a blank tile on the phone), so the bridge makes it with its own
 * ffmpeg. Best effort, as in Baileys: no ffmpeg, or a frame it cannot read, sends the video without.
 */
import { convertFileWithFfmpeg } from "./ffmpeg.ts";

/** Baileys' own thumbnail width for images and videos; the height keeps the aspect (even, for JPEG). */
const THUMBNAIL_ARGS = ["-frames:v", "1", "-vf", "scale=32:-2", "-f", "image2", "-c:v", "mjpeg"];

/** The preview of the video at `videoPath` (spooled: ffmpeg reads only the frames it needs). */
export async function videoThumbnail(videoPath: string): Promise<Uint8Array | undefined> {
  try {
    return await convertFileWithFfmpeg(
      { path: videoPath },
      THUMBNAIL_ARGS,
      "thumbnail.jpg",
      "video thumbnails",
    );
  } catch {
    return undefined;
  }
}
