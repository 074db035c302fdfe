/**
 * Media on its way out of the bridge: fetching what an operation sends (a public URL, or an upload the
 * edge holds) and preparing it for WhatsApp (stickers and voice notes converted, image, video and audio
 * checked by content: content-kind.ts). Images, audio, stickers and profile pictures are held in memory
 * (at most MEDIA_MEMORY_MAX_BYTES); videos and documents, up to 2 GiB, are spooled to disk
 * (spool.ts) and WhatsApp's side streams them from there. Every transfer is capped while it streams, so
 * a lying Content-Length or an endless body can fill neither memory nor disk. Received media goes the
 * other way in edge-upload.ts.
 */

import {
  MEDIA_KIND_LIMITS,
  MEDIA_MEMORY_MAX_BYTES,
  type MediaKindName,
  type MediaSource,
  mediaPath,
} from "../protocol/messaging.ts";
import { chooseMimetype } from "../protocol/mime.ts";
import type { Operation } from "../protocol/operations.ts";
import { type MediaBytes, type MediaFile, OperationError, type PreparedMedia } from "../protocol/seam.ts";
import { errorMessage } from "../shared/log.ts";
import { checkedMedia, voiceNote } from "./content-kind.ts";
import { fetchPublic } from "./public-fetch.ts";
import { releaseMedia, Spool } from "./spool.ts";
import { makeSticker } from "./sticker.ts";
import { videoThumbnail } from "./video-thumbnail.ts";
import { voiceWaveform } from "./voice-waveform.ts";

/** Where this session's uploads and downloads live on the edge. */
export interface EdgeMedia {
  /** http:// or https:// origin (and path prefix, if any) of the edge, without a trailing slash. */
  origin: string;
  token: string;
  sessionId: string;
}

/** How long a transfer may go without a byte (a 2 GB file takes minutes; a stalled one never ends). */
export const MEDIA_TIMEOUT_MS = 30_000;

const MIB = 1024 * 1024;

/** The refusal of a file over `cap`, naming the limit. */
export function tooLarge(cap: number): OperationError {
  return new OperationError(400, `media larger than ${Number((cap / MIB).toFixed(2))} MiB`);
}

/** The edge's HTTP origin for a session link given as ws:// or wss://. */
export function httpOrigin(edgeUrl: string): string {
  return edgeUrl.replace(/^ws(s?):\/\//i, "http$1://").replace(/\/+$/, "");
}

export function mediaUrl(edge: EdgeMedia, ref: string): string {
  return `${edge.origin}${mediaPath(edge.sessionId, ref)}`;
}

function decodeFileName(header: string | null): string | undefined {
  if (!header) return undefined;
  try {
    return decodeURIComponent(header).slice(0, 256) || undefined;
  } catch {
    return undefined; // a malformed escape is no reason to refuse the media itself
  }
}

/** The last path segment, when it looks like a file name: documents fetched by URL keep their name. */
function fileNameOfUrl(url: string): string | undefined {
  const segment = new URL(url).pathname.split("/").pop() ?? "";
  return segment.includes(".") ? decodeFileName(segment) : undefined;
}

/** Where each chunk of a body goes (memory or the spool), in order. */
type Sink = (chunk: Uint8Array) => Promise<void> | void;

/** Aborts a transfer that goes MEDIA_TIMEOUT_MS without progress; every chunk rearms it. */
class StallTimer {
  private timer: NodeJS.Timeout;

  constructor(private readonly abort: AbortController) {
    this.timer = this.arm();
  }

  touch(): void {
    clearTimeout(this.timer);
    this.timer = this.arm();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private arm(): NodeJS.Timeout {
    return setTimeout(() => this.abort.abort(new Error("timeout")), MEDIA_TIMEOUT_MS);
  }
}

/** Reads a body into `sink`, refusing (and hanging up) once it is declared or found larger than `cap`. */
async function pump(response: Response, cap: number, abort: AbortController, stall: StallTimer, sink: Sink) {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > cap) {
    abort.abort();
    throw tooLarge(cap);
  }
  const reader = response.body?.getReader();
  if (!reader) return;
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    stall.touch();
    total += value.byteLength;
    if (total > cap) {
      abort.abort();
      throw tooLarge(cap);
    }
    await sink(value);
  }
}

/** Where a source's bytes come from: a caller's URL (public addresses only) or the edge's upload. */
interface SourceRequest {
  url: string;
  headers: Record<string, string>;
  trusted: boolean;
}

function requestFor(source: MediaSource, edge: EdgeMedia): SourceRequest {
  if ("url" in source) return { url: source.url, headers: {}, trusted: false };
  const headers = { authorization: `Bearer ${edge.token}` };
  return { url: mediaUrl(edge, source.upload), headers, trusted: true };
}

/**
 * Fetches within the cap, hanging up after a stall; every failure is the caller's 400. A caller's URL
 * must stay on public addresses; the edge's own media endpoint is trusted. The response's headers
 * stay readable after its body went to `sink`.
 */
async function transfer(request: SourceRequest, cap: number, sink: Sink): Promise<Response> {
  const abort = new AbortController();
  const stall = new StallTimer(abort);
  try {
    const response = request.trusted
      ? await fetch(request.url, { headers: request.headers, signal: abort.signal, redirect: "follow" })
      : await fetchPublic(request.url, { signal: abort.signal });
    if (!response.ok) {
      abort.abort();
      throw new OperationError(400, `could not fetch media: ${response.status}`);
    }
    stall.touch();
    await pump(response, cap, abort, stall, sink);
    return response;
  } catch (error) {
    if (error instanceof OperationError) throw error;
    const why = abort.signal.aborted ? "timeout" : errorMessage(error);
    throw new OperationError(400, `could not fetch media: ${why}`);
  } finally {
    stall.stop();
  }
}

/** The file name a source gives: the edge's header for uploads, the URL's last segment otherwise. */
function sourceFileName(source: MediaSource, response: Response): { fileName?: string } {
  const fileName =
    "url" in source ? fileNameOfUrl(source.url) : decodeFileName(response.headers.get("x-file-name"));
  return fileName ? { fileName } : {};
}

/** A source fetched into memory, at most `cap` bytes (never more than MEDIA_MEMORY_MAX_BYTES). */
export async function fetchMedia(
  source: MediaSource,
  edge: EdgeMedia,
  cap = MEDIA_MEMORY_MAX_BYTES,
): Promise<MediaBytes> {
  const chunks: Uint8Array[] = [];
  const limit = Math.min(cap, MEDIA_MEMORY_MAX_BYTES);
  const response = await transfer(requestFor(source, edge), limit, (chunk) => void chunks.push(chunk));
  const bytes = Buffer.concat(chunks);
  const mimetype = chooseMimetype(response.headers.get("content-type"), bytes);
  return { bytes, mimetype, ...sourceFileName(source, response) };
}

/** A source written to a private temp file as it arrives, at most `cap` bytes; nothing left on failure. */
export async function spoolMedia(source: MediaSource, edge: EdgeMedia, cap: number): Promise<MediaFile> {
  const spool = await Spool.open();
  try {
    const response = await transfer(requestFor(source, edge), cap, (chunk) => spool.write(chunk));
    const file = await spool.finish();
    const mimetype = chooseMimetype(response.headers.get("content-type"), file.head);
    return { file, mimetype, ...sourceFileName(source, response) };
  } catch (error) {
    await spool.discard();
    throw error;
  }
}

/** The limit for one kind of send: the edge's (`maxBytes`) when it gives one, else the kind's default. */
export function kindCap(kind: MediaKindName, maxBytes: number | undefined): number {
  return maxBytes ?? MEDIA_KIND_LIMITS[kind];
}

/** Runs `use` on a spooled file, removing the file when `use` refuses it. */
async function usingSpooled(media: MediaFile, use: (media: MediaFile) => Promise<MediaFile>) {
  try {
    return await use(media);
  } catch (error) {
    await releaseMedia(media);
    throw error;
  }
}

async function prepareVideo(media: MediaFile): Promise<MediaFile> {
  const video = checkedMedia("video", media);
  const thumbnail = await videoThumbnail(video.file.path);
  return thumbnail ? { ...video, thumbnail } : video;
}

/**
 * What `operation` sends, fetched and ready for WhatsApp; null when it sends no media. A spooled file
 * (video, document) is the caller's to remove with `releaseMedia` once the operation is over.
 */
export async function prepareMedia(operation: Operation, edge: EdgeMedia): Promise<PreparedMedia | null> {
  if (operation.op === "picture.set") return fetchMedia(operation.source, edge, MEDIA_KIND_LIMITS.image);
  if (operation.op !== "send") return null;
  const { content, maxBytes } = operation;
  switch (content.type) {
    case "image":
      return checkedMedia("image", await fetchMedia(content.media, edge, kindCap("image", maxBytes)));
    case "video":
      return usingSpooled(await spoolMedia(content.media, edge, kindCap("video", maxBytes)), prepareVideo);
    case "audio": {
      const media = await fetchMedia(content.media, edge, kindCap("audio", maxBytes));
      if (!content.ptt) return checkedMedia("audio", media);
      const voice = await voiceNote(media);
      const waveform = await voiceWaveform(voice.bytes);
      return waveform ? { ...voice, waveform } : voice;
    }
    case "document": {
      const media = await spoolMedia(content.media, edge, kindCap("document", maxBytes));
      return { ...media, mimetype: content.mimetype, fileName: content.fileName };
    }
    case "sticker":
      return makeSticker(await fetchMedia(content.media, edge, kindCap("sticker", maxBytes)), {
        pack: content.pack,
        author: content.author,
      });
    default:
      return null;
  }
}
