/**
 * How large media may be, and where it moves between bridge and edge. Shared by both ends; imports
 * nothing. (Re-exported by messaging.ts, where the rest of the wire shapes live.)
 */
const MIB = 1024 * 1024;

/**
 * Largest file the gateway moves, in either direction (uploads, URL fetches, downloads): WhatsApp's
 * own limit for a document, 2 GiB. Each kind has its own, smaller default (`MEDIA_KIND_LIMITS`).
 */
export const MEDIA_MAX_BYTES = 2048 * MIB;

/**
 * Media the bridge works on in memory (images, audio and voice notes it converts, stickers, profile
 * pictures): never more than this. Videos and documents are spooled to disk instead.
 */
export const MEDIA_MEMORY_MAX_BYTES = 16 * MIB;

/** The kinds of media a message carries, as the limits name them. */
export type MediaKindName = "image" | "video" | "audio" | "document" | "sticker";

/**
 * WhatsApp's limits per kind, the defaults (an operator lowers or raises them with MEDIA_LIMITS_MB on
 * the edge): 16 MB for images and audio as WhatsApp's clients send them, 2 GB for videos and
 * documents (WhatsApp's file limit since 2022), 1 MiB for a sticker (its own are 100 KB to 500 KB).
 */
export const MEDIA_KIND_LIMITS: Readonly<Record<MediaKindName, number>> = {
  image: 16 * MIB,
  audio: 16 * MIB,
  sticker: MIB,
  video: MEDIA_MAX_BYTES,
  document: MEDIA_MAX_BYTES,
};

/**
 * Size of each part of a large file moved between bridge and edge (R2 multipart: every part but the
 * last the same size, at least 5 MiB). One part is the most either side holds in memory at once, and
 * keeps each request far below Cloudflare's request body limit (100 MB).
 */
export const MEDIA_PART_BYTES = 8 * MIB;

/** Edge path where a bridge GETs an upload to send, or PUTs downloaded media (bearer BRIDGE_TOKEN). */
export function mediaPath(sessionId: string, ref: string): string {
  return `/bridge/v1/sessions/${encodeURIComponent(sessionId)}/media/${ref}`;
}

/**
 * Edge path for downloaded media larger than one part: `POST` opens a multipart upload
 * (`{"uploadId"}`), `PUT …/parts/{n}?uploadId=` sends part n (`{"etag"}`), `POST …/parts/complete?uploadId=`
 * with `{"parts":[{"partNumber","etag"}]}` finishes it, `DELETE …/parts?uploadId=` abandons it.
 */
export function mediaPartsPath(sessionId: string, ref: string): string {
  return `${mediaPath(sessionId, ref)}/parts`;
}
