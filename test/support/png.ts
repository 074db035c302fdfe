import { inflateSync } from "node:zlib";

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const BYTES_PER_PIXEL: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/**
 * Decodes a PNG data URL far enough to prove it is a real image: signature, IHDR, and IDAT data
 * that inflates to exactly one filter byte plus one row of pixels per line (8-bit depth).
 */
export function decodePngDataUrl(dataUrl: string): { width: number; height: number } {
  const bytes = Buffer.from(dataUrl.replace(/^data:image\/png;base64,/, ""), "base64");
  if (!bytes.subarray(0, 8).equals(SIGNATURE)) throw new Error("not a PNG signature");
  let offset = 8;
  let width = 0;
  let height = 0;
  let colorType = -1;
  const idat: Buffer[] = [];
  while (offset < bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString("ascii", offset + 4, offset + 8);
    const data = bytes.subarray(offset + 8, offset + 8 + length);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      colorType = data.readUInt8(9);
    }
    if (type === "IDAT") idat.push(data);
    offset += 12 + length;
  }
  const bpp = BYTES_PER_PIXEL[colorType];
  if (!width || !height || !bpp) throw new Error("missing or unsupported IHDR");
  const pixels = inflateSync(Buffer.concat(idat));
  if (pixels.length !== height * (1 + width * bpp)) throw new Error("IDAT does not match the dimensions");
  return { width, height };
}
