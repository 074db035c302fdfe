// Gzip bombs as the review built them: a valid .tar.gz of one tar header and then gigabytes of zeros,
// compressed at deflate's ceiling (about 1000:1), so 2 GiB travel in about 2 MiB. Built in a few
// milliseconds from one compressed MiB repeated: each piece is deflated with a full flush, so it ends
// on a byte boundary and stands alone, and the pieces concatenate into one valid deflate stream.
import { constants, crc32, deflateRawSync } from "node:zlib";

const MIB = 1024 * 1024;
const encoder = new TextEncoder();

export interface BombEntry {
  name: string;
  /** "0" a regular file, "5" a directory. */
  type: "0" | "5";
  /** The size the header declares. */
  size: number;
}

/** A ustar header (name, size, type, checksum); the rest left zero. */
function tarHeader(entry: BombEntry): Uint8Array {
  const block = new Uint8Array(512);
  const put = (offset: number, text: string) => block.set(encoder.encode(text), offset);
  put(0, entry.name);
  put(100, "0000644\0");
  put(124, `${entry.size.toString(8).padStart(11, "0")}\0`);
  put(136, "00000000000\0");
  block.fill(0x20, 148, 156);
  put(156, entry.type);
  put(257, "ustar\u000000");
  const sum = block.reduce((total, byte) => total + byte, 0);
  put(148, `${sum.toString(8).padStart(6, "0")}\0 `);
  return block;
}

const deflatePiece = (data: Uint8Array) =>
  deflateRawSync(data, { level: 9, finishFlush: constants.Z_FULL_FLUSH });

/**
 * `header` (when given) followed by `zeroMiB` MiB of zero bytes, as a complete gzip member with the
 * right CRC-32 and length: nothing but its size ratio is wrong with it.
 */
export function gzipBomb(header: BombEntry | null, zeroMiB: number): Uint8Array {
  const head = header ? tarHeader(header) : new Uint8Array(0);
  const zeros = new Uint8Array(MIB);
  const first = deflatePiece(head);
  const piece = deflatePiece(zeros);
  const gzipHeader = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 0xff];
  const finalBlock = [0x03, 0x00]; // an empty fixed-Huffman block marked final
  const out = new Uint8Array(gzipHeader.length + first.length + piece.length * zeroMiB + 2 + 8);
  let offset = 0;
  const append = (bytes: ArrayLike<number>) => {
    out.set(bytes, offset);
    offset += bytes.length;
  };
  append(gzipHeader);
  append(first);
  let crc = crc32(head);
  for (let i = 0; i < zeroMiB; i++) {
    append(piece);
    crc = crc32(zeros, crc);
  }
  append(finalBlock);
  const trailer = new DataView(new ArrayBuffer(8));
  trailer.setUint32(0, crc >>> 0, true);
  trailer.setUint32(4, (head.length + zeroMiB * MIB) >>> 0, true); // ISIZE is the length mod 2^32
  append(new Uint8Array(trailer.buffer));
  return out;
}
