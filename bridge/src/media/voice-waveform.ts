/**
 * The waveform a phone draws on a voice note: 64 bars, 0–100, in the message (`waveform`). Baileys
 * computes it only with the optional `audio-decode` package and otherwise sends none (the phone draws a
 * flat line), so the bridge decodes the note with its own ffmpeg and measures it as Baileys would: the
 * mean loudness of 64 equal stretches of the first channel, scaled so the loudest is 100. Best effort:
 * no ffmpeg, or audio it cannot decode, sends the note without.
 */
import { convertWithFfmpeg } from "./ffmpeg.ts";

const BARS = 64;
/** Mono 16-bit PCM at 8 kHz: plenty to measure loudness over 64 stretches. */
const PCM_ARGS = ["-vn", "-ac", "1", "-ar", "8000", "-f", "s16le", "-c:a", "pcm_s16le"];

export async function voiceWaveform(voice: Uint8Array): Promise<Uint8Array | undefined> {
  try {
    return waveformOf(await convertWithFfmpeg(voice, PCM_ARGS, "voice.pcm", "voice waveforms"));
  } catch {
    return undefined;
  }
}

/** The 64 bars of little-endian 16-bit PCM; none for audio shorter than 64 samples. */
export function waveformOf(pcm: Uint8Array): Uint8Array | undefined {
  const view = new DataView(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  const samples = Math.floor(pcm.byteLength / 2);
  const stretch = Math.floor(samples / BARS);
  if (stretch === 0) return undefined;
  const means = Array.from({ length: BARS }, (_, bar) => {
    let sum = 0;
    for (let i = bar * stretch; i < (bar + 1) * stretch; i++) sum += Math.abs(view.getInt16(i * 2, true));
    return sum / stretch;
  });
  const loudest = Math.max(...means);
  return new Uint8Array(means.map((mean) => (loudest === 0 ? 0 : Math.floor((100 * mean) / loudest))));
}
