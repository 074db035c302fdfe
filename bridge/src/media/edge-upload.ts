/**
 * Received media to the edge's media store as it downloads, never whole in memory: the decrypted stream
 * is cut into parts of exactly MEDIA_PART_BYTES (the last one shorter). Media that ends within the
 * first part goes up in one `PUT` at mediaPath; anything longer as a multipart upload at
 * mediaPartsPath (`POST` opens it, `PUT /{n}?uploadId=` each part, `POST /complete?uploadId=` with
 * every part's etag, `DELETE ?uploadId=` abandons it on any failure), so the bridge holds about one
 * part at a time, whatever the file's size.
 */

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
 */
export async function* partsOf(
  chunks: AsyncIterable<Uint8Array>,
  partBytes: number,
  cap: number,
): AsyncGenerator<Part, void, undefined> {
  let pending: Uint8Array[] = [];
  let filled = 0;
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.byteLength;
    if (total > cap) throw tooLarge(cap);
    let offset = 0;
    while (offset < chunk.byteLength) {
      if (filled === partBytes) {
        yield { bytes: Buffer.concat(pending, filled), last: false };
        pending = [];
        filled = 0;
      }
      const take = Math.min(partBytes - filled, chunk.byteLength - offset);
      pending.push(chunk.subarray(offset, offset + take));
      filled += take;
      offset += take;
    }
  }
  yield { bytes: Buffer.concat(pending, filled), last: true };
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

async function jsonField(response: Response, field: string, what: string): Promise<string> {
  const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  const value = body?.[field];
  if (typeof value !== "string" || !value) throw new Error(`the edge answered ${what} without ${field}`);
  return value;
}

/** Media that fits one part: a single PUT, as the edge has always taken downloads. */
async function putWhole(edge: EdgeMedia, ref: string, media: MediaDownload, bytes: Buffer): Promise<void> {
  const init = { method: "PUT", headers: describingHeaders(edge, media), body: bytes };
  const response = await edgeRequest(mediaUrl(edge, ref), init, "the downloaded media");
  await response.arrayBuffer().catch(() => undefined);
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
    const response = await edgeRequest(
      this.url(`/${partNumber}`),
      { method: "PUT", headers, body: bytes },
      what,
    );
    this.etags.push({ partNumber, etag: await jsonField(response, "etag", what) });
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
