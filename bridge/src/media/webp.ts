/**
 * Just enough of the WebP container (RIFF) to give a sticker its pack and author the way WhatsApp reads
 * them: an `EXIF` chunk whose single IFD entry (tag 0x5741) holds a JSON object. That needs the
 * extended format, so a simple WebP (`VP8 ` / `VP8L` only) is rewritten with a `VP8X` header first.
 * sharp cannot write arbitrary EXIF into WebP, hence this file.
 */

export interface StickerMetadata {
  "sticker-pack-id": string;
  "sticker-pack-name": string;
  "sticker-pack-publisher": string;
  emojis: string[];
}

interface Chunk {
  fourcc: string;
  data: Uint8Array;
}

const VP8X_ALPHA = 0x10;
export const VP8X_EXIF = 0x08;
const VP8X_ANIMATION = 0x02;
/** The IFD tag WhatsApp looks up for sticker metadata ("WA" little-endian). */
const STICKER_TAG = 0x5741;

const ascii = (bytes: Uint8Array, start: number, end: number) =>
  String.fromCharCode(...bytes.subarray(start, end));

export function isWebp(bytes: Uint8Array): boolean {
  return bytes.length >= 12 && ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 12) === "WEBP";
}

export function readChunks(webp: Uint8Array): Chunk[] {
  if (!isWebp(webp)) throw new Error("not a WebP file");
  const view = new DataView(webp.buffer, webp.byteOffset, webp.byteLength);
  const chunks: Chunk[] = [];
  let offset = 12;
  while (offset + 8 <= webp.length) {
    const size = view.getUint32(offset + 4, true);
    const start = offset + 8;
    if (start + size > webp.length) throw new Error("truncated WebP chunk");
    chunks.push({ fourcc: ascii(webp, offset, offset + 4), data: webp.subarray(start, start + size) });
    // Chunks are padded to an even length; the size field does not count the pad byte.
    offset = start + size + (size % 2);
  }
  return chunks;
}

function writeChunks(chunks: Chunk[]): Uint8Array {
  const body = chunks.reduce((sum, chunk) => sum + 8 + chunk.data.length + (chunk.data.length % 2), 0);
  const out = new Uint8Array(12 + body);
  const view = new DataView(out.buffer);
  out.set([0x52, 0x49, 0x46, 0x46], 0); // RIFF
  view.setUint32(4, 4 + body, true);
  out.set([0x57, 0x45, 0x42, 0x50], 8); // WEBP
  let offset = 12;
  for (const chunk of chunks) {
    for (let i = 0; i < 4; i++) out[offset + i] = chunk.fourcc.charCodeAt(i);
    view.setUint32(offset + 4, chunk.data.length, true);
    out.set(chunk.data, offset + 8);
    offset += 8 + chunk.data.length + (chunk.data.length % 2);
  }
  return out;
}

/** Canvas size and alpha of a simple WebP's single bitstream (needed to build its VP8X header). */
function bitstreamInfo(chunk: Chunk): { width: number; height: number; alpha: boolean } {
  const d = chunk.data;
  if (chunk.fourcc === "VP8L" && d.length >= 5 && d[0] === 0x2f) {
    const bits = (d[1] ?? 0) | ((d[2] ?? 0) << 8) | ((d[3] ?? 0) << 16) | ((d[4] ?? 0) << 24);
    return {
      width: (bits & 0x3fff) + 1,
      height: ((bits >>> 14) & 0x3fff) + 1,
      alpha: ((bits >>> 28) & 1) === 1,
    };
  }
  if (chunk.fourcc === "VP8 " && d.length >= 10 && d[3] === 0x9d && d[4] === 0x01 && d[5] === 0x2a) {
    return {
      width: ((d[6] ?? 0) | ((d[7] ?? 0) << 8)) & 0x3fff,
      height: ((d[8] ?? 0) | ((d[9] ?? 0) << 8)) & 0x3fff,
      alpha: false,
    };
  }
  throw new Error(`unsupported WebP bitstream ${chunk.fourcc.trim()}`);
}

function vp8x(flags: number, width: number, height: number): Chunk {
  const data = new Uint8Array(10);
  data[0] = flags;
  const w = width - 1;
  const h = height - 1;
  data.set([w & 0xff, (w >> 8) & 0xff, (w >> 16) & 0xff, h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff], 4);
  return { fourcc: "VP8X", data };
}

/**
 * The EXIF payload wa-sticker-formatter and node-webpmux write, byte for byte: a little-endian TIFF
 * header, one IFD entry (tag 0x5741, type UNDEFINED, count = JSON length, value at offset 22) and the
 * JSON. It omits the next-IFD pointer a strict TIFF would have; this exact layout is what WhatsApp is
 * known to read, so it is kept rather than "corrected".
 */
export function stickerExif(metadata: StickerMetadata): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(metadata));
  const header = [0x49, 0x49, 0x2a, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01, 0x00, 0x41, 0x57, 0x07, 0x00];
  const exif = new Uint8Array(22 + json.length);
  exif.set(header, 0);
  new DataView(exif.buffer).setUint32(14, json.length, true);
  exif.set([0x16, 0x00, 0x00, 0x00], 18);
  exif.set(json, 22);
  return exif;
}

/** Returns `webp` as extended WebP with the EXIF flag set and `metadata` in its (only) EXIF chunk. */
export function withStickerMetadata(webp: Uint8Array, metadata: StickerMetadata): Uint8Array {
  const chunks = readChunks(webp).filter((chunk) => chunk.fourcc !== "EXIF");
  const first = chunks[0];
  if (!first) throw new Error("empty WebP");
  let extended: Chunk[];
  if (first.fourcc === "VP8X") {
    const header = new Uint8Array(first.data);
    header[0] = (header[0] ?? 0) | VP8X_EXIF;
    extended = [{ fourcc: "VP8X", data: header }, ...chunks.slice(1)];
  } else {
    const { width, height, alpha } = bitstreamInfo(first);
    extended = [vp8x(VP8X_EXIF | (alpha ? VP8X_ALPHA : 0), width, height), ...chunks];
  }
  // EXIF belongs after the image data (and after every frame of an animation).
  return writeChunks([...extended, { fourcc: "EXIF", data: stickerExif(metadata) }]);
}

/** The sticker JSON of a WebP written by `withStickerMetadata` (or any tool using the same layout). */
export function readStickerMetadata(webp: Uint8Array): Record<string, unknown> | null {
  const exif = readChunks(webp).find((chunk) => chunk.fourcc === "EXIF")?.data;
  if (!exif || exif.length < 22 || exif[0] !== 0x49 || exif[1] !== 0x49) return null;
  const view = new DataView(exif.buffer, exif.byteOffset, exif.byteLength);
  const ifd = view.getUint32(4, true);
  const entries = view.getUint16(ifd, true);
  for (let i = 0; i < entries; i++) {
    const entry = ifd + 2 + i * 12;
    if (view.getUint16(entry, true) !== STICKER_TAG) continue;
    const count = view.getUint32(entry + 4, true);
    const at = view.getUint32(entry + 8, true);
    const parsed: unknown = JSON.parse(new TextDecoder().decode(exif.subarray(at, at + count)));
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : null;
  }
  return null;
}

export function vp8xFlags(webp: Uint8Array): number | null {
  const first = readChunks(webp)[0];
  return first?.fourcc === "VP8X" ? (first.data[0] ?? 0) : null;
}

export function isAnimatedWebp(webp: Uint8Array): boolean {
  if (!isWebp(webp)) return false;
  return ((vp8xFlags(webp) ?? 0) & VP8X_ANIMATION) !== 0;
}
