import { badRequest } from "../http/errors";

/**
 * multipart/form-data read as it arrives, for uploads far larger than a Worker may hold: text fields
 * are collected (each at most FIELD_MAX_BYTES), the file part is handed on chunk by chunk to
 * `storeFile` while the body is still streaming in. Only one file part is taken; a second is a 400.
 */
const FIELD_MAX_BYTES = 64 * 1024;
const HEADERS_MAX_BYTES = 16 * 1024;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface FilePart {
  field: string;
  fileName: string;
  contentType: string;
}

export interface StreamedForm<T> {
  fields: Map<string, string>;
  file: { part: FilePart; stored: T } | null;
}

/** The boundary of a multipart/form-data Content-Type, or null when it is not one. */
export function boundaryOf(contentType: string | undefined): string | null {
  if (!/^multipart\/form-data\s*;/i.test(contentType ?? "")) return null;
  const match = /boundary\s*=\s*(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType ?? "");
  return match ? (match[1] ?? match[2] ?? null) : null;
}

export async function readStreamedForm<T>(
  body: ReadableStream<Uint8Array>,
  boundary: string,
  storeFile: (part: FilePart, chunks: AsyncIterable<Uint8Array>) => Promise<T>,
): Promise<StreamedForm<T>> {
  const source = new ByteSource(body.getReader());
  // The first boundary has no CRLF before it; with one added, every boundary looks the same.
  source.prepend(encoder.encode("\r\n"));
  const delimiter = encoder.encode(`\r\n--${boundary}`);
  const form: StreamedForm<T> = { fields: new Map(), file: null };
  try {
    await drain(partBody(source, delimiter)); // the preamble
    while (await nextPartFollows(source)) {
      const part = await readPartHeaders(source);
      const chunks = partBody(source, delimiter);
      if (part.fileName === null) {
        form.fields.set(part.field, await collectField(chunks));
        continue;
      }
      if (form.file) throw badRequest("Send one file per request");
      const file = { field: part.field, fileName: part.fileName, contentType: part.contentType };
      form.file = { part: file, stored: await storeFile(file, chunks) };
      await drain(chunks); // whatever the store left unread, up to the next boundary
    }
    return form;
  } catch (error) {
    await source.cancel();
    throw error;
  }
}

/** After a boundary: `--` ends the body, CRLF starts another part. */
async function nextPartFollows(source: ByteSource): Promise<boolean> {
  await source.need(2);
  const marker = decoder.decode(source.take(2));
  if (marker === "--") return false;
  if (marker === "\r\n") return true;
  throw badRequest("Malformed multipart body: a boundary is followed by neither CRLF nor --");
}

async function readPartHeaders(source: ByteSource) {
  const end = encoder.encode("\r\n\r\n");
  let at = source.indexOf(end);
  while (at < 0) {
    if (source.length > HEADERS_MAX_BYTES)
      throw badRequest("Malformed multipart body: part headers too long");
    if (!(await source.fill())) throw badRequest("Malformed multipart body: it ends inside part headers");
    at = source.indexOf(end);
  }
  const text = decoder.decode(source.take(at));
  source.take(end.length);
  const headers = new Map<string, string>();
  for (const line of text.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const disposition = headers.get("content-disposition") ?? "";
  const field = parameter(disposition, "name");
  if (field === null) throw badRequest("Malformed multipart body: a part has no name");
  return {
    field,
    fileName: parameter(disposition, "filename"),
    contentType: headers.get("content-type") ?? "application/octet-stream",
  };
}

/** `name="value"` (or unquoted) in a Content-Disposition header. */
function parameter(header: string, name: string): string | null {
  const match = new RegExp(`(?:^|;)\\s*${name}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;]*))`, "i").exec(
    header,
  );
  if (!match) return null;
  return (match[1] ?? match[2] ?? "").replace(/\\(.)/g, "$1").trim();
}

/** The bytes of one part, up to (and consuming) the next delimiter. */
async function* partBody(source: ByteSource, delimiter: Uint8Array): AsyncGenerator<Uint8Array> {
  for (;;) {
    const at = source.indexOf(delimiter);
    if (at >= 0) {
      if (at > 0) yield source.take(at);
      source.take(delimiter.length);
      return;
    }
    // Everything but what could be the start of a delimiter split across two reads is body.
    const safe = source.length - (delimiter.length - 1);
    if (safe > 0) yield source.take(safe);
    if (!(await source.fill())) throw badRequest("Malformed multipart body: it ends inside a part");
  }
}

async function collectField(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  let text = "";
  let size = 0;
  for await (const chunk of chunks) {
    size += chunk.byteLength;
    if (size > FIELD_MAX_BYTES) throw badRequest(`A form field is longer than ${FIELD_MAX_BYTES} bytes`);
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}

async function drain(chunks: AsyncIterable<Uint8Array>): Promise<void> {
  for await (const _ of chunks) {
    // discarded
  }
}

/** The unread bytes of a stream, topped up on demand. */
class ByteSource {
  #buffer: Uint8Array = new Uint8Array(0);

  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  get length(): number {
    return this.#buffer.byteLength;
  }

  prepend(bytes: Uint8Array): void {
    this.#buffer = concat(bytes, this.#buffer);
  }

  /** Reads one more chunk; false at the end of the stream. */
  async fill(): Promise<boolean> {
    const { done, value } = await this.reader.read();
    if (done) return false;
    this.#buffer = concat(this.#buffer, value);
    return true;
  }

  async need(bytes: number): Promise<void> {
    while (this.length < bytes)
      if (!(await this.fill())) throw badRequest("Malformed multipart body: it ends early");
  }

  take(bytes: number): Uint8Array {
    const taken = this.#buffer.subarray(0, bytes);
    this.#buffer = this.#buffer.subarray(bytes);
    return taken;
  }

  indexOf(pattern: Uint8Array): number {
    const buffer = this.#buffer;
    const first = pattern[0];
    const last = buffer.byteLength - pattern.byteLength;
    for (
      let at = buffer.indexOf(first ?? 0);
      at >= 0 && at <= last;
      at = buffer.indexOf(first ?? 0, at + 1)
    ) {
      let match = true;
      for (let i = 1; i < pattern.byteLength && match; i++) match = buffer[at + i] === pattern[i];
      if (match) return at;
    }
    return -1;
  }

  async cancel(): Promise<void> {
    await this.reader.cancel().catch(() => undefined);
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.byteLength === 0) return b;
  if (b.byteLength === 0) return a;
  const joined = new Uint8Array(a.byteLength + b.byteLength);
  joined.set(a);
  joined.set(b, a.byteLength);
  return joined;
}
