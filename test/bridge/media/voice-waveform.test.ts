// A voice note's waveform as the bridge measures it (bridge/src/media/voice-waveform.ts): 64 bars of
// mean loudness, the loudest 100; prepareMedia's use of it is in media.test.ts.
import { describe, expect, it } from "vitest";
import { waveformOf } from "../../../bridge/src/media/voice-waveform.ts";

/** Little-endian 16-bit PCM of `values`. */
function pcm(values: number[]): Uint8Array {
  const bytes = new Uint8Array(values.length * 2);
  const view = new DataView(bytes.buffer);
  for (const [i, value] of values.entries()) view.setInt16(i * 2, value, true);
  return bytes;
}

describe("voice-note waveform", () => {
  it("measures silence, a half-loud second half, and nothing for audio too short", () => {
    expect([...(waveformOf(pcm(new Array(128).fill(0))) ?? [])]).toEqual(new Array(64).fill(0));
    const halves = waveformOf(pcm([...new Array(64).fill(-2000), ...new Array(64).fill(1000)]));
    expect([...(halves ?? [])]).toEqual([...new Array(32).fill(100), ...new Array(32).fill(50)]);
    expect(waveformOf(pcm(new Array(63).fill(5)))).toBeUndefined();
  });
});
