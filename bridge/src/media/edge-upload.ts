/**
 * Received media to the edge's media store as it downloads, never whole in memory: the decrypted stream
 * is cut into parts of exactly MEDIA_PART_BYTES (the last one shorter). Media that ends within the
 * first part goes up in one `PUT` at mediaPath; anything longer as a multipart upload at
 * mediaPartsPath (`POST` opens it, `PUT /{n}?uploadId=` each part, `POST /complete?uploadId=` with
 * every part's etag, `DELETE ?uploadId=` abandons it on any failure), so the bridge holds about one
 * part at a time, whatever the file's size.
 */

import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { MEDIA_PART_BYTES, mediaPartsPath } from "../protocol/messaging.ts";
import type { MediaDownload } from "../protocol/seam.ts";
import { type EdgeMedia, MEDIA_TIMEOUT_MS, mediaUrl, tooLarge } from "./media.ts";

/**
 * The chunks, failing once none came for `stallMs`. Baileys pipes the HTTP download into its decipher
 * without passing errors on, so a connection that dies mid-file would otherwise leave the stream (and
 * the operation) waiting forever.
 */
export async function* stallGuarded(
  chunks: AsyncIterable<Uint8Array>,
  stallMs: number,
): AsyncGenerator<Uint8Array, void, undefined> {
  const iterator = chunks[Symbol.asyncIterator]();
  let stalled = false;
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          stalled = true;
          reject(new Error(`the media download stalled (nothing for ${stallMs / 1000} s)`));
        }, stallMs);
      });
      try {
        const next = await Promise.race([iterator.next(), timeout]);
        if (next.done) return;
        yield next.value;
      } finally {
        clearTimeout(timer);
      }
    }
  } finally {
    // Stops the source; after a stall its pending read may never settle, so that is not waited for.
    const stopping = Promise.resolve(iterator.return?.()).catch(() => undefined);
    if (!stalled) await stopping;
  }
}

/** One part of the stream; `last` is known because the next byte has been seen (or the end). */
interface Part {
  bytes: Buffer;
  last: boolean;
}

/**
 * The stream in parts of `partBytes`, refusing (400 naming `cap`) once it passes `cap`. A full part is
 * held back until one more byte arrives, so the last part is never empty (unless the file is).
 *
 * Every part is the same buffer, filled again for the next one: a part's bytes are valid until the
 * consumer asks for the next part (it sends each before it asks). A new buffer per part made 8 MiB of
 * garbage per part, which with the decipher's own chunks let the bridge's memory climb to half a
 * 200 MB file before the collector caught up. The buffer starts small and doubles up to a part, so
 * a sticker does not cost 8 MiB.
 */
export async function* partsOf(
  chunks: AsyncIterable<Uint8Array>,
  partBytes: number,
  cap: number,
): AsyncGenerator<Part, void, undefined> {
  let part: Buffer = Buffer.allocUnsafe(Math.min(FIRST_BUFFER_BYTES, partBytes));
  let filled = 0;
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.byteLength;
    if (total > cap) throw tooLarge(cap);
    part = roomFor(part, filled, Math.min(partBytes, filled + chunk.byteLength));
    let offset = 0;
    while (offset < chunk.byteLength) {
      if (filled === partBytes) {
        yield { bytes: part, last: false };
        filled = 0;
      }
      const take = Math.min(partBytes - filled, chunk.byteLength - offset);
      part.set(chunk.subarray(offset, offset + take), filled);
      filled += take;
      offset += take;
    }
  }
  yield { bytes: part.subarray(0, filled), last: true };
}

const FIRST_BUFFER_BYTES = 64 * 1024;

/** `buffer`, or a larger one (doubled, with its first `filled` bytes) when `needed` does not fit. */
function roomFor(buffer: Buffer, filled: number, needed: number): Buffer {
  if (needed <= buffer.byteLength) return buffer;
  let size = buffer.byteLength;
  while (size < needed) size *= 2;
  const larger = Buffer.allocUnsafe(size);
  buffer.copy(larger, 0, 0, filled);
  return larger;
}

function describingHeaders(edge: EdgeMedia, media: MediaDownload): Record<string, string> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${edge.token}`,
    "content-type": media.mimetype,
  };
  if (media.fileName) headers["x-file-name"] = encodeURIComponent(media.fileName);
  return headers;
}

/** One request to the edge; a non-2xx answer is a failure naming `what`. The body is always drained. */
async function edgeRequest(url: string, init: RequestInit, what: string): Promise<Response> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(MEDIA_TIMEOUT_MS) });
  if (!response.ok) {
    // Drain the body so the connection goes back to the pool.
    await response.arrayBuffer().catch(() => undefined);
    throw new Error(`the edge refused ${what}: ${response.status}`);
  }
  return response;
}

/** The most of the edge's answer to a PUT that is read: a small JSON object. */
const ANSWER_MAX_BYTES = 64 * 1024;

/**
 * A PUT of `bytes` as they are, answered with the edge's JSON (or null): node:http writes the buffer
 * itself, where fetch copies a Buffer body before sending it (undici's extractBody slices it), 8 MiB
 * of garbage per part. A non-2xx answer is a failure naming `what`.
 */
function putBytes(
  url: string,
  headers: Record<string, string>,
  bytes: Uint8Array,
  what: string,
): Promise<Record<string, unknown> | null> {
  const target = new URL(url);
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(
      target,
      { method: "PUT", headers: { ...headers, "content-length": String(bytes.byteLength) } },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.byteLength;
          if (size <= ANSWER_MAX_BYTES) chunks.push(chunk);
        });
        response.on("error", reject);
        response.on("end", () => {
          const status = response.statusCode ?? 0;
          if (status < 200 || status > 299) return reject(new Error(`the edge refused ${what}: ${status}`));
          resolve(parsedObject(Buffer.concat(chunks).toString("utf8")));
        });
      },
    );
    request.setTimeout(MEDIA_TIMEOUT_MS, () =>
      request.destroy(new Error(`the edge did not answer ${what} within ${MEDIA_TIMEOUT_MS / 1000} s`)),
    );
    request.on("error", reject);
    request.end(bytes);
  });
}

function parsedObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function fieldOf(body: Record<string, unknown> | null, field: string, what: string): string {
  const value = body?.[field];
  if (typeof value !== "string" || !value) throw new Error(`the edge answered ${what} without ${field}`);
  return value;
}

async function jsonField(response: Response, field: string, what: string): Promise<string> {
  const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  const value = body?.[field];
  if (typeof value !== "string" || !value) throw new Error(`the edge answered ${what} without ${field}`);
  return value;
}

/** Media that fits one part: a single PUT, as the edge has always taken downloads. */
async function putWhole(edge: EdgeMedia, ref: string, media: MediaDownload, bytes: Buffer): Promise<void> {
  await putBytes(mediaUrl(edge, ref), describingHeaders(edge, media), bytes, "the downloaded media");
}

/** The multipart upload of one download, on the edge's parts endpoint. */
class PartsUpload {
  private readonly etags: Array<{ partNumber: number; etag: string }> = [];

  private constructor(
    private readonly edge: EdgeMedia,
    private readonly base: string,
    private readonly uploadId: string,
  ) {}

  static async open(edge: EdgeMedia, ref: string, media: MediaDownload): Promise<PartsUpload> {
    const base = `${edge.origin}${mediaPartsPath(edge.sessionId, ref)}`;
    const init = { method: "POST", headers: describingHeaders(edge, media) };
    const response = await edgeRequest(base, init, "a multipart upload");
    return new PartsUpload(edge, base, await jsonField(response, "uploadId", "the multipart upload"));
  }

  private url(suffix: string): string {
    return `${this.base}${suffix}?uploadId=${encodeURIComponent(this.uploadId)}`;
  }

  private get auth(): Record<string, string> {
    return { authorization: `Bearer ${this.edge.token}` };
  }

  async put(bytes: Buffer): Promise<void> {
    const partNumber = this.etags.length + 1;
    const headers = { ...this.auth, "content-type": "application/octet-stream" };
    const what = `part ${partNumber}`;
    const answer = await putBytes(this.url(`/${partNumber}`), headers, bytes, what);
    this.etags.push({ partNumber, etag: fieldOf(answer, "etag", what) });
  }

  async complete(): Promise<void> {
    const headers = { ...this.auth, "content-type": "application/json" };
    const body = JSON.stringify({ parts: this.etags });
    const response = await edgeRequest(
      this.url("/complete"),
      { method: "POST", headers, body },
      "the upload",
    );
    await response.arrayBuffer().catch(() => undefined);
  }

  /** Best effort: the edge also expires uploads nobody finished. */
  async abandon(): Promise<void> {
    try {
      const response = await fetch(this.url(""), {
        method: "DELETE",
        headers: this.auth,
        signal: AbortSignal.timeout(MEDIA_TIMEOUT_MS),
      });
      await response.arrayBuffer().catch(() => undefined);
    } catch {
      // The upload's failure is what the caller reports, not this.
    }
  }
}

/** Sends every part after `first`, then completes; abandons the upload on any failure. */
async function uploadInParts(
  upload: PartsUpload,
  first: Part,
  rest: AsyncGenerator<Part, void, undefined>,
): Promise<number> {
  try {
    let part = first;
    let size = 0;
    for (;;) {
      await upload.put(part.bytes);
      size += part.bytes.byteLength;
      if (part.last) break;
      const next = await rest.next();
      if (next.done) throw new Error("the media stream ended without its last part");
      part = next.value;
    }
    await upload.complete();
    return size;
  } catch (error) {
    await upload.abandon();
    throw error;
  }
}

/**
 * Streams `media` to the edge's store as `ref`, at most `cap` bytes (400 naming it past that); resolves
 * with the size. On any failure the source stream is stopped and a started multipart upload abandoned.
 */
export async function uploadToEdge(
  edge: EdgeMedia,
  ref: string,
  media: MediaDownload,
  cap: number,
  { stallMs = MEDIA_TIMEOUT_MS }: { stallMs?: number } = {},
): Promise<number> {
  const parts = partsOf(stallGuarded(media.chunks, stallMs), MEDIA_PART_BYTES, cap);
  try {
    const first = await parts.next();
    if (first.done) throw new Error("the media stream ended before its end");
    if (first.value.last) {
      await putWhole(edge, ref, media, first.value.bytes);
      return first.value.bytes.byteLength;
    }
    return await uploadInParts(await PartsUpload.open(edge, ref, media), first.value, parts);
  } finally {
    // Stops the source (WhatsApp's download) when the upload ends early; a no-op after the last part.
    await parts.return(undefined);
  }
}
