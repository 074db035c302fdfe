/**
 * Media bytes in and out of the bridge: fetching what an operation sends (a public URL, or an upload
 * the edge holds), preparing it for WhatsApp (stickers and voice notes converted, image, video and
 * audio checked by content: content-kind.ts), and handing
 * downloaded media to the edge's media store. Every transfer is capped at MEDIA_MAX_BYTES while it
 * streams, so a lying Content-Length or an endless body cannot fill the bridge's memory.
 */

import { MEDIA_MAX_BYTES, type MediaSource, mediaPath } from "../protocol/messaging.ts";
import { chooseMimetype } from "../protocol/mime.ts";
import type { Operation } from "../protocol/operations.ts";
import { OperationError, type PreparedMedia } from "../protocol/seam.ts";
import { errorMessage } from "../shared/log.ts";
import { checkedMedia, voiceNote } from "./content-kind.ts";
import { fetchPublic } from "./public-fetch.ts";
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

export const MEDIA_TIMEOUT_MS = 30_000;
const TOO_LARGE = `media larger than ${MEDIA_MAX_BYTES / (1024 * 1024)} MiB`;

/** The edge's HTTP origin for a session link given as ws:// or wss://. */
export function httpOrigin(edgeUrl: string): string {
  return edgeUrl.replace(/^ws(s?):\/\//i, "http$1://").replace(/\/+$/, "");
}

function mediaUrl(edge: EdgeMedia, ref: string): string {
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

async function readCapped(response: Response, abort: AbortController): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > MEDIA_MAX_BYTES) {
    abort.abort();
    throw new OperationError(400, TOO_LARGE);
  }
  const reader = response.body?.getReader();
  if (!reader) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > MEDIA_MAX_BYTES) {
      abort.abort();
      throw new OperationError(400, TOO_LARGE);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

/**
 * Fetches within the size cap and the timeout; every failure is the caller's 400. A caller's URL
 * (`headers` empty) must stay on public addresses; the edge's own media endpoint is trusted.
 */
async function download(
  url: string,
  headers: Record<string, string>,
  trusted = false,
): Promise<{ bytes: Uint8Array; response: Response }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error("timeout")), MEDIA_TIMEOUT_MS);
  try {
    const response = trusted
      ? await fetch(url, { headers, signal: abort.signal, redirect: "follow" })
      : await fetchPublic(url, { signal: abort.signal });
    if (!response.ok) {
      abort.abort();
      throw new OperationError(400, `could not fetch media: ${response.status}`);
    }
    return { bytes: await readCapped(response, abort), response };
  } catch (error) {
    if (error instanceof OperationError) throw error;
    const why = abort.signal.aborted ? "timeout" : errorMessage(error);
    throw new OperationError(400, `could not fetch media: ${why}`);
  } finally {
    clearTimeout(timer);
  }
}

export async function fetchMedia(source: MediaSource, edge: EdgeMedia): Promise<PreparedMedia> {
  if ("url" in source) {
    const { bytes, response } = await download(source.url, {});
    const fileName = fileNameOfUrl(source.url);
    return {
      bytes,
      mimetype: chooseMimetype(response.headers.get("content-type"), bytes),
      ...(fileName ? { fileName } : {}),
    };
  }
  const { bytes, response } = await download(
    mediaUrl(edge, source.upload),
    { authorization: `Bearer ${edge.token}` },
    true,
  );
  const fileName = decodeFileName(response.headers.get("x-file-name"));
  return {
    bytes,
    mimetype: chooseMimetype(response.headers.get("content-type"), bytes),
    ...(fileName ? { fileName } : {}),
  };
}

/** The bytes `operation` sends, fetched and ready for WhatsApp; null when it sends no media. */
export async function prepareMedia(operation: Operation, edge: EdgeMedia): Promise<PreparedMedia | null> {
  if (operation.op === "picture.set") return fetchMedia(operation.source, edge);
  if (operation.op !== "send") return null;
  const content = operation.content;
  switch (content.type) {
    case "image":
      return checkedMedia("image", await fetchMedia(content.media, edge));
    case "video": {
      const video = checkedMedia("video", await fetchMedia(content.media, edge));
      const thumbnail = await videoThumbnail(video.bytes);
      return thumbnail ? { ...video, thumbnail } : video;
    }
    case "audio": {
      const media = await fetchMedia(content.media, edge);
      if (!content.ptt) return checkedMedia("audio", media);
      const voice = await voiceNote(media);
      const waveform = await voiceWaveform(voice.bytes);
      return waveform ? { ...voice, waveform } : voice;
    }
    case "document": {
      const media = await fetchMedia(content.media, edge);
      return { ...media, mimetype: content.mimetype, fileName: content.fileName };
    }
    case "sticker":
      return makeSticker(await fetchMedia(content.media, edge), {
        pack: content.pack,
        author: content.author,
      });
    default:
      return null;
  }
}

/** Hands downloaded media to the edge's store as `ref` (the edge answers the API caller from there). */
export async function storeMedia(edge: EdgeMedia, ref: string, media: PreparedMedia): Promise<void> {
  if (media.bytes.byteLength > MEDIA_MAX_BYTES) throw new OperationError(400, TOO_LARGE);
  const headers: Record<string, string> = {
    authorization: `Bearer ${edge.token}`,
    "content-type": media.mimetype,
  };
  if (media.fileName) headers["x-file-name"] = encodeURIComponent(media.fileName);
  const response = await fetch(mediaUrl(edge, ref), {
    method: "PUT",
    headers,
    body: media.bytes,
    signal: AbortSignal.timeout(MEDIA_TIMEOUT_MS),
  });
  // Drain the body so the connection goes back to the pool.
  await response.arrayBuffer().catch(() => undefined);
  if (!response.ok) throw new Error(`the edge refused the downloaded media: ${response.status}`);
}
