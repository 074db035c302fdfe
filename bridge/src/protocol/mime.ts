/** Media types from magic bytes, for sources that do not say (or say application/octet-stream). */

const startsWith = (bytes: Uint8Array, prefix: readonly number[], at = 0) =>
  bytes.length >= at + prefix.length && prefix.every((byte, i) => bytes[at + i] === byte);

const ascii = (text: string) => [...text].map((char) => char.charCodeAt(0));

const SIGNATURES: ReadonlyArray<{ mimetype: string; test: (bytes: Uint8Array) => boolean }> = [
  { mimetype: "image/png", test: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { mimetype: "image/jpeg", test: (b) => startsWith(b, [0xff, 0xd8, 0xff]) },
  { mimetype: "image/gif", test: (b) => startsWith(b, ascii("GIF87a")) || startsWith(b, ascii("GIF89a")) },
  { mimetype: "image/webp", test: (b) => startsWith(b, ascii("RIFF")) && startsWith(b, ascii("WEBP"), 8) },
  // ISO media shares the `ftyp` box with HEIF/AVIF stills and m4a audio: the brand tells them apart.
  { mimetype: "image/avif", test: (b) => startsWith(b, ascii("ftypavif"), 4) },
  {
    mimetype: "image/heic",
    test: (b) => startsWith(b, ascii("ftyphei"), 4) || startsWith(b, ascii("ftypmif1"), 4),
  },
  { mimetype: "audio/mp4", test: (b) => startsWith(b, ascii("ftypM4A"), 4) },
  { mimetype: "video/3gpp", test: (b) => startsWith(b, ascii("ftyp3gp"), 4) },
  { mimetype: "video/mp4", test: (b) => startsWith(b, ascii("ftyp"), 4) },
  { mimetype: "video/webm", test: (b) => startsWith(b, [0x1a, 0x45, 0xdf, 0xa3]) },
  { mimetype: "audio/ogg", test: (b) => startsWith(b, ascii("OggS")) },
  { mimetype: "audio/wav", test: (b) => startsWith(b, ascii("RIFF")) && startsWith(b, ascii("WAVE"), 8) },
  { mimetype: "audio/flac", test: (b) => startsWith(b, ascii("fLaC")) },
  { mimetype: "audio/amr", test: (b) => startsWith(b, ascii("#!AMR")) },
  // ADTS AAC and MPEG audio share the 12-bit frame sync; the layer bits (00 for AAC) tell them apart.
  { mimetype: "audio/aac", test: (b) => b.length > 1 && b[0] === 0xff && ((b[1] ?? 0) & 0xf6) === 0xf0 },
  {
    mimetype: "audio/mpeg",
    test: (b) =>
      startsWith(b, ascii("ID3")) || (b.length > 1 && b[0] === 0xff && ((b[1] ?? 0) & 0xe0) === 0xe0),
  },
  { mimetype: "application/pdf", test: (b) => startsWith(b, ascii("%PDF-")) },
];

export const UNKNOWN_MIMETYPE = "application/octet-stream";
/** What WhatsApp expects for a voice note; clients show a waveform only for ogg/opus. */
export const VOICE_MIMETYPE = "audio/ogg; codecs=opus";

export function sniffMimetype(bytes: Uint8Array): string | null {
  return SIGNATURES.find((signature) => signature.test(bytes))?.mimetype ?? null;
}

/**
 * The type to send: the source's own Content-Type when it is specific, else the sniffed one. Parameters
 * are dropped (`image/png; charset=binary` is just image/png) and the length is bounded for the wire.
 */
export function chooseMimetype(declared: string | null, bytes: Uint8Array): string {
  const essence = (declared ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  const vague = essence === "" || essence === UNKNOWN_MIMETYPE || essence === "binary/octet-stream";
  if (!vague && /^[a-z0-9.+-]+\/[a-z0-9.+-]+$/.test(essence)) return essence.slice(0, 128);
  return sniffMimetype(bytes) ?? UNKNOWN_MIMETYPE;
}

export function isOgg(bytes: Uint8Array): boolean {
  return sniffMimetype(bytes) === "audio/ogg";
}

/** An Ogg stream whose first packet is an Opus header: what WhatsApp plays as a voice note. */
export function isOggOpus(bytes: Uint8Array): boolean {
  if (!isOgg(bytes)) return false;
  const marker = ascii("OpusHead");
  const end = Math.min(bytes.byteLength, 128) - marker.length;
  for (let at = 4; at <= end; at++) if (startsWith(bytes, marker, at)) return true;
  return false;
}
