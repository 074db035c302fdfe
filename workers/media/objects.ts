import { MEDIA_PART_BYTES } from "../../bridge/src/protocol/messaging";
import { ApiError, titleOf } from "../http/errors";
import { describeBytes } from "./limits";

/**
 * WhatsApp media in R2 (the MEDIA bucket): one object per file, `sessions/<session id>/media/<ref>`,
 * its type in the object's HTTP metadata and its name and kind in custom metadata. Bytes only ever
 * stream through: a file of unknown length is cut into parts of MEDIA_PART_BYTES (R2 multipart), so
 * neither the Worker nor the Durable Object holds more than one part of it.
 */
export const mediaKey = (sessionId: string, ref: string) => `sessions/${sessionId}/media/${ref}`;
/** Every object of one session (the retention sweep and a session's deletion list it). */
export const sessionMediaPrefix = (sessionId: string) => `sessions/${sessionId}/media/`;

export type StoredKind = "upload" | "download";

export interface MediaMeta {
  mimetype: string;
  fileName: string | null;
  kind: StoredKind;
}

export function putOptions(meta: MediaMeta): R2PutOptions {
  return {
    httpMetadata: { contentType: meta.mimetype },
    customMetadata: { kind: meta.kind, ...(meta.fileName ? { fileName: meta.fileName } : {}) },
  };
}

/** What an object says of itself (the metadata `putOptions` gave it). */
export function metaOf(object: R2Object): MediaMeta & { size: number; uploaded: number } {
  return {
    mimetype: object.httpMetadata?.contentType ?? "application/octet-stream",
    fileName: object.customMetadata?.fileName ?? null,
    kind: object.customMetadata?.kind === "upload" ? "upload" : "download",
    size: object.size,
    uploaded: object.uploaded.getTime(),
  };
}

export const tooLarge = (limit: number) =>
  new ApiError(413, titleOf(413), `The file is larger than the limit for its kind (${describeBytes(limit)})`);

/**
 * Streams `body` into the object `key`, refusing (413, nothing stored) past `maxBytes`. A file that fits
 * in one part is one PUT; a larger one goes up part by part and is completed only when all arrived.
 */
export async function writeMediaStream(
  bucket: R2Bucket,
  key: string,
  chunks: AsyncIterable<Uint8Array>,
  meta: MediaMeta,
  maxBytes: number,
): Promise<number> {
  const parts = partsOf(chunks, maxBytes);
  const first = await parts.next();
  const firstPart = first.done ? new Uint8Array(0) : first.value;
  const second = await parts.next();
  if (second.done) {
    await bucket.put(key, firstPart, putOptions(meta));
    return firstPart.byteLength;
  }
  const upload = await bucket.createMultipartUpload(key, putOptions(meta));
  try {
    const uploaded = [await upload.uploadPart(1, firstPart), await upload.uploadPart(2, second.value)];
    let size = firstPart.byteLength + second.value.byteLength;
    for await (const part of parts) {
      uploaded.push(await upload.uploadPart(uploaded.length + 1, part));
      size += part.byteLength;
    }
    await upload.complete(uploaded);
    return size;
  } catch (error) {
    await upload.abort().catch(() => undefined);
    throw error;
  }
}

/**
 * The chunks re-cut into MEDIA_PART_BYTES parts (the last shorter), counted against `maxBytes`. Two
 * buffers take turns: a part is handed out in one while the other still holds the one before it (the
 * writer keeps the first part while it reads the second), and a part is never overwritten before the
 * writer asked for the part after the next. Reusing them keeps a large file from leaving a trail of
 * 8 MiB buffers for the garbage collector: a 200 MB upload grew workerd by 330 MiB that way.
 */
async function* partsOf(chunks: AsyncIterable<Uint8Array>, maxBytes: number): AsyncGenerator<Uint8Array> {
  const buffers = [new Uint8Array(MEDIA_PART_BYTES), new Uint8Array(MEDIA_PART_BYTES)];
  let turn = 0;
  let part = buffers[0] as Uint8Array;
  let filled = 0;
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.byteLength;
    if (total > maxBytes) throw tooLarge(maxBytes);
    let offset = 0;
    while (offset < chunk.byteLength) {
      const take = Math.min(chunk.byteLength - offset, MEDIA_PART_BYTES - filled);
      part.set(chunk.subarray(offset, offset + take), filled);
      filled += take;
      offset += take;
      if (filled === MEDIA_PART_BYTES) {
        yield part;
        turn = 1 - turn;
        part = buffers[turn] as Uint8Array;
        filled = 0;
      }
    }
  }
  if (filled > 0 || total === 0) yield part.subarray(0, filled);
}

/** A request body as chunks; the reader is released (cancelled) if the consumer stops early. */
export async function* chunksOf(body: ReadableStream<Uint8Array> | null): AsyncGenerator<Uint8Array> {
  if (!body) return;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** A random reference for a stored file (URL-safe; the bridge puts it in a path). */
export function newMediaRef(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** A body of at most `maxBytes` (one part), read whole; 413 past it without reading the rest. */
export async function readPart(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<Uint8Array> {
  const bytes = new Uint8Array(maxBytes);
  let filled = 0;
  if (!body) return bytes.subarray(0, 0);
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (filled + value.byteLength > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(maxBytes);
    }
    bytes.set(value, filled);
    filled += value.byteLength;
  }
  return bytes.subarray(0, filled);
}

/** A Content-Length header's value, or null when absent or not a plain non-negative integer. */
function knownLength(header: string | null): number | null {
  return header !== null && /^\d{1,15}$/.test(header) ? Number(header) : null;
}

/**
 * A request body R2 may read as it is (natively, no copy in JavaScript): one with a Content-Length
 * and no chunked encoding. 413 when that length is above `maxBytes`; null when the length is unknown
 * (or the body empty), for the caller to read it under its own cap.
 */
export function bodyOfKnownLength(request: Request, maxBytes: number): ReadableStream | null {
  const declared = knownLength(request.headers.get("content-length"));
  if (declared !== null && declared > maxBytes) throw tooLarge(maxBytes);
  if (declared === null || declared === 0 || !request.body || request.headers.has("transfer-encoding"))
    return null;
  return request.body;
}
