/**
 * Company packages as `.tar.gz` archives: a ustar writer for exports and a streaming reader for
 * imports. Only regular UTF-8 text files travel; the reader enforces every limit while it inflates
 * (through the budgeted inflater, workers/http/inflate.ts), so a zip bomb is refused after reading one
 * header, or once its inflated bytes pass the cap, never after expanding it. Workers runtime only
 * (CompressionStream / DecompressionStream, no Node APIs).
 */
import { badRequest } from "../../http/errors";
import { BudgetedInflater } from "../../http/inflate";

/** path (posix, relative) → UTF-8 text. */
export type PackageFiles = Record<string, string>;

export const PACKAGE_LIMITS = {
  maxArchiveBytes: 10 * 1024 * 1024,
  maxFiles: 2000,
  maxFileBytes: 1024 * 1024,
  maxTotalBytes: 20 * 1024 * 1024,
};

const BLOCK = 512;
const MAX_PATH_CHARS = 300;
/** Headers, directories and pax records on top of file contents; bounds the inflated stream. */
const TAR_OVERHEAD_BYTES = 8 * 1024 * 1024;
/** All inflated bytes an archive may have: past this it is refused, whatever its headers say. */
export const MAX_INFLATED_BYTES = PACKAGE_LIMITS.maxTotalBytes + TAR_OVERHEAD_BYTES;
/** A package at the limits inflates in well under a second; a stream still going after this is refused. */
export const MAX_INFLATE_MS = 10_000;
/** Pax extended headers carry a few short records; anything bigger is not a package. */
const MAX_PAX_BYTES = 64 * 1024;
const encoder = new TextEncoder();

/** Why `path` is not a safe relative posix path, or null. Length is checked separately. */
function pathProblem(path: string): string | null {
  if (path === "") return "is empty";
  if (path.includes("\0")) return "contains a NUL byte";
  if (path.includes("\\")) return "contains a backslash";
  if (path.startsWith("/")) return "is absolute";
  const segments = path.split("/");
  if (segments.includes("..")) return 'contains a ".." segment';
  if (segments.includes(".")) return 'contains a "." segment';
  if (segments.includes("")) return "contains an empty segment";
  return null;
}

/** Throws a 400 naming `path` unless it is relative, posix, inside the package and ≤ 300 chars. */
export function assertSafePackagePath(path: string): void {
  const problem = pathProblem(path);
  if (problem) throw badRequest(`Package path "${path}" ${problem}`);
  if (path.length > MAX_PATH_CHARS) {
    throw badRequest(`Package path "${path}" is longer than ${MAX_PATH_CHARS} characters`);
  }
}

// ---------------------------------------------------------------------------------------------
// Writer

/** Writes `value` as zero-padded octal filling `width - 1` digits plus a NUL, as ustar expects. */
function writeOctal(header: Uint8Array, offset: number, width: number, value: number): void {
  const text = value.toString(8).padStart(width - 1, "0");
  header.set(encoder.encode(text), offset);
  header[offset + width - 1] = 0;
}

/**
 * Splits a UTF-8 name into ustar `prefix` (≤ 155 bytes) and `name` (≤ 100 bytes) at a slash; names
 * that cannot be split that way are refused rather than written in a format readers disagree on.
 */
function splitUstarName(path: string): { name: Uint8Array; prefix: Uint8Array } {
  const bytes = encoder.encode(path);
  if (bytes.length <= 100) return { name: bytes, prefix: new Uint8Array(0) };
  for (let i = bytes.length - 1; i > 0; i--) {
    if (bytes[i] !== 0x2f) continue;
    const prefix = bytes.subarray(0, i);
    const name = bytes.subarray(i + 1);
    if (prefix.length <= 155 && name.length <= 100 && name.length > 0) return { name, prefix };
    if (prefix.length <= 155) break; // every shorter prefix leaves a longer name
  }
  throw badRequest(`Package path "${path}" is too long for a tar archive`);
}

function fileHeader(path: string, size: number, mtime: number): Uint8Array {
  const header = new Uint8Array(BLOCK);
  const { name, prefix } = splitUstarName(path);
  header.set(name, 0);
  writeOctal(header, 100, 8, 0o644);
  writeOctal(header, 108, 8, 0);
  writeOctal(header, 116, 8, 0);
  writeOctal(header, 124, 12, size);
  writeOctal(header, 136, 12, mtime);
  header.fill(0x20, 148, 156); // checksum is computed with its own field as spaces
  header[156] = 0x30; // '0': regular file
  header.set(encoder.encode("ustar\u000000"), 257);
  header.set(prefix, 345);
  const checksum = header.reduce((sum, byte) => sum + byte, 0);
  header.set(encoder.encode(`${checksum.toString(8).padStart(6, "0")}\u0000 `), 148);
  return header;
}

async function gzip(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A ustar archive of `files` under `rootPath/` (no prefix when empty), gzip-compressed. */
export async function packTarGz(files: PackageFiles, rootPath: string): Promise<Uint8Array> {
  if (rootPath !== "") assertSafePackagePath(rootPath);
  const mtime = Math.floor(Date.now() / 1000);
  const parts: Uint8Array[] = [];
  for (const path of Object.keys(files).sort()) {
    assertSafePackagePath(path);
    const content = encoder.encode(files[path] ?? "");
    parts.push(fileHeader(rootPath ? `${rootPath}/${path}` : path, content.length, mtime), content);
    const padding = (BLOCK - (content.length % BLOCK)) % BLOCK;
    if (padding) parts.push(new Uint8Array(padding));
  }
  parts.push(new Uint8Array(BLOCK * 2)); // end-of-archive marker
  const tar = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    tar.set(part, offset);
    offset += part.length;
  }
  return gzip(tar);
}

// ---------------------------------------------------------------------------------------------
// Reader

/** Pulls exact byte counts out of the inflating stream (which refuses itself past its budget). */
class InflatedBytes {
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  private done = false;

  constructor(private readonly inflater: BudgetedInflater) {}

  /** `n` bytes, or null at a clean end of stream; a stream ending mid-block is a truncated archive. */
  async take(n: number): Promise<Uint8Array | null> {
    while (this.buffered < n && !this.done) await this.pull();
    if (this.buffered === 0 && this.done) return null;
    if (this.buffered < n) throw badRequest("Package archive is truncated");
    return this.shift(n);
  }

  cancel(): void {
    this.inflater.cancel();
  }

  private async pull(): Promise<void> {
    const chunk = await this.inflater.read();
    if (chunk === null) {
      this.done = true;
      return;
    }
    this.chunks.push(chunk);
    this.buffered += chunk.byteLength;
  }

  private shift(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const chunk = this.chunks[0] as Uint8Array;
      const used = Math.min(chunk.length, n - filled);
      out.set(chunk.subarray(0, used), filled);
      filled += used;
      if (used === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(used);
    }
    this.buffered -= n;
    return out;
  }
}

interface TarHeader {
  path: string;
  size: number;
  type: string;
}

/** Refuses malformed UTF-8 instead of substituting U+FFFD; stateless, so one instance serves all. */
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** A NUL-terminated header field as text (names may be UTF-8; numbers and flags are ASCII). */
function field(header: Uint8Array, offset: number, width: number, asUtf8 = false): string {
  const slice = header.subarray(offset, offset + width);
  const end = slice.indexOf(0);
  const bytes = end === -1 ? slice : slice.subarray(0, end);
  if (!asUtf8) return String.fromCharCode(...bytes);
  try {
    return utf8.decode(bytes);
  } catch {
    throw badRequest("Package archive has an entry name that is not UTF-8");
  }
}

function octal(text: string): number {
  const trimmed = text.trim();
  return /^[0-7]*$/.test(trimmed) ? Number.parseInt(trimmed || "0", 8) : Number.NaN;
}

/** The header in `block`, after checking its checksum (a bad checksum means this is not tar at all). */
function parseHeader(block: Uint8Array): TarHeader {
  const stored = octal(field(block, 148, 8));
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (block[i] ?? 0);
  if (stored !== sum) throw badRequest("Package archive is not a valid tar archive (bad header checksum)");
  const name = field(block, 0, 100, true);
  const prefix = field(block, 257, 6) === "ustar" ? field(block, 345, 155, true) : "";
  // High bit set = GNU base-256 size, only used past 8 GiB: far beyond any limit here.
  const size = (block[124] ?? 0) & 0x80 ? Number.POSITIVE_INFINITY : octal(field(block, 124, 12));
  if (Number.isNaN(size)) throw badRequest("Package archive is not a valid tar archive (bad size field)");
  return { path: prefix ? `${prefix}/${name}` : name, size, type: String.fromCharCode(block[156] ?? 0) };
}

/** The `path` record of a pax extended header (`<len> path=<value>\n`), if any. */
function paxPath(data: Uint8Array): string | undefined {
  let text: string;
  try {
    text = utf8.decode(data);
  } catch {
    throw badRequest("Package archive has a pax header that is not UTF-8");
  }
  for (const record of text.split("\n")) {
    const match = /^\d+ path=(.*)$/s.exec(record);
    if (match) return match[1];
  }
  return undefined;
}

const REFUSED_TYPES: Record<string, string> = {
  "1": "a hard link",
  "2": "a symbolic link",
  "3": "a character device",
  "4": "a block device",
  "6": "a FIFO",
};

/** Tar entries as `[path, text]`, limits enforced before each entry's data is read. */
class TarReader {
  private files = new Map<string, string>();
  private totalBytes = 0;

  constructor(private readonly input: InflatedBytes) {}

  async readAll(): Promise<Map<string, string>> {
    let pendingPath: string | undefined;
    for (;;) {
      const block = await this.input.take(BLOCK);
      if (block === null || block.every((byte) => byte === 0)) return this.files; // end of archive
      const header = parseHeader(block);
      if (pendingPath !== undefined) header.path = pendingPath;
      pendingPath = undefined;
      if (header.type === "x" || header.type === "g") {
        if (header.size > MAX_PAX_BYTES) throw badRequest("Package archive has an oversized pax header");
        const path = paxPath(await this.data(header.size));
        if (header.type === "x") pendingPath = path;
      } else if (header.type === "5") {
        await this.data(header.size);
      } else if (header.type === "0" || header.type === "\0") {
        await this.readFile(header);
      } else {
        const kind = REFUSED_TYPES[header.type] ?? `an unsupported entry (type "${header.type}")`;
        throw badRequest(`Package archive entry "${header.path}" is ${kind}; only regular files are allowed`);
      }
    }
  }

  private async readFile(header: TarHeader): Promise<void> {
    // "./x" is how `tar -C dir .` names files; it is the same path as "x".
    const path = header.path.replace(/^(\.\/)+/, "");
    const problem = pathProblem(path);
    if (problem) throw badRequest(`Package archive entry "${header.path}" ${problem}`);
    if (this.files.has(path)) throw badRequest(`Package archive has "${path}" twice`);
    const { maxFiles, maxFileBytes, maxTotalBytes } = PACKAGE_LIMITS;
    if (this.files.size >= maxFiles) throw badRequest(`Package archive has more than ${maxFiles} files`);
    if (header.size > maxFileBytes) {
      throw badRequest(`Package file "${path}" is larger than ${maxFileBytes} bytes`);
    }
    this.totalBytes += header.size;
    if (this.totalBytes > maxTotalBytes) {
      throw badRequest(`Package files add up to more than ${maxTotalBytes} bytes`);
    }
    this.files.set(path, decodeText(path, await this.data(header.size)));
  }

  /** An entry's data, then the padding to the next block. */
  private async data(size: number): Promise<Uint8Array> {
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    if (padded === 0) return new Uint8Array(0);
    const bytes = await this.input.take(padded);
    if (bytes === null) throw badRequest("Package archive is truncated");
    return bytes.subarray(0, size);
  }
}

function decodeText(path: string, bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw badRequest(`Package file "${path}" is not UTF-8 text`);
  }
}

/** GitHub puts everything under "<owner>-<repo>-<sha>/": drop one directory every file shares. */
function stripCommonTopDir(files: Map<string, string>): Map<string, string> {
  const paths = [...files.keys()];
  const top = paths[0]?.split("/")[0];
  if (top === undefined || !paths.every((path) => path.startsWith(`${top}/`))) return files;
  return new Map([...files].map(([path, text]) => [path.slice(top.length + 1), text]));
}

/** The files of a `.tar.gz` package; every problem is a 400 that says what was wrong. */
export async function unpackTarGz(bytes: Uint8Array): Promise<PackageFiles> {
  if (bytes.length > PACKAGE_LIMITS.maxArchiveBytes) {
    throw badRequest(`Package archive is larger than ${PACKAGE_LIMITS.maxArchiveBytes} bytes`);
  }
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) throw badRequest("Package archive is not gzip-compressed");
  const input = new InflatedBytes(
    new BudgetedInflater(bytes, {
      maxBytes: MAX_INFLATED_BYTES,
      maxMs: MAX_INFLATE_MS,
      label: "Package archive",
    }),
  );
  try {
    const files = stripCommonTopDir(await new TarReader(input).readAll());
    if (files.size === 0) throw badRequest("Package archive contains no files");
    for (const path of files.keys()) assertSafePackagePath(path);
    return Object.fromEntries(files);
  } finally {
    input.cancel();
  }
}
