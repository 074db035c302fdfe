/**
 * What a send's media really is, from its bytes: a caller (or a server's Content-Type) can call a JPEG
 * a video, and WhatsApp then shows a broken message. Image, video and audio sends must carry content
 * of that kind; the type sent to WhatsApp is the sniffed one. Voice notes play (with a waveform) only
 * as Ogg/Opus, so anything else ffmpeg can decode is converted.
 */
import { isOggOpus, sniffMimetype, VOICE_MIMETYPE } from "../protocol/mime.ts";
import { type MediaBytes, OperationError, type PreparedMedia } from "../protocol/seam.ts";
import { convertWithFfmpeg } from "./ffmpeg.ts";

export type MediaKind = "image" | "video" | "audio";

/** ISO media (brand mp42, isom …) carries audio-only files as often as video: an .m4a may say either. */
const AUDIO_CONTAINERS = new Set(["video/mp4", "video/3gpp", "video/webm"]);

function kindMatches(kind: MediaKind, sniffed: string): boolean {
  if (sniffed.startsWith(`${kind}/`)) return true;
  return kind === "audio" && AUDIO_CONTAINERS.has(sniffed);
}

/** The media with its sniffed type, or a 400 naming what the content really is (a file: by its head). */
export function checkedMedia<M extends PreparedMedia>(kind: MediaKind, media: M): M {
  const sniffed = sniffMimetype("file" in media ? media.file.head : media.bytes);
  if (sniffed === null || !kindMatches(kind, sniffed))
    throw new OperationError(
      400,
      `${kind} content is ${sniffed ?? "not a known media format"} (declared ${media.mimetype})`,
    );
  return { ...media, mimetype: sniffed };
}

/**
 * Mono Opus in Ogg at 48 kHz, the format WhatsApp's own clients record; speech needs no more than
 * 32 kbit/s.
 */
const VOICE_ARGS = ["-vn", "-ac", "1", "-ar", "48000", "-c:a", "libopus", "-b:a", "32k", "-f", "ogg"];

/** A voice note as WhatsApp plays it: Ogg/Opus kept as is, any other audio ffmpeg reads converted. */
export async function voiceNote(media: MediaBytes): Promise<MediaBytes> {
  if (isOggOpus(media.bytes)) return { ...media, mimetype: VOICE_MIMETYPE };
  const bytes = await convertWithFfmpeg(media.bytes, VOICE_ARGS, "voice.ogg", "voice notes");
  return { bytes, mimetype: VOICE_MIMETYPE };
}
