import { mediaKey, metaOf, newMediaRef, putOptions, type StoredKind } from "../../../workers/media/objects";
import type { SessionContext } from "../context";

/**
 * The session's media: the bytes in R2 (workers/media/objects.ts, `sessions/<id>/media/<ref>`), and
 * here one row per file naming it, so a message knows its media and the sweep knows what to remove.
 *
 * Objects created before media moved to R2 kept their bytes here, in `media_parts` (1 MiB rows under
 * SQLite's 2 MB limit). Such a file is moved to R2 the first time it is read, then served like any other.
 */
/** Uploads not sent within this long are dropped by the sweep (media/retention.ts). */
export const UPLOAD_TTL_MS = 60 * 60 * 1000;

/** A stored file as the Worker serves it: the bytes are at `mediaKey(sessionId, ref)`. */
export interface StoredMedia {
  ref: string;
  mimetype: string;
  fileName: string | null;
  size: number;
}

type MediaRow = {
  ref: string;
  kind: string;
  mimetype: string;
  file_name: string | null;
  size: number;
};

/** Names a file the Worker or the bridge already put in R2. */
export function recordMedia(sql: SqlStorage, kind: StoredKind, media: StoredMedia, now: number): void {
  sql.exec(
    "INSERT OR REPLACE INTO media (ref, kind, mimetype, file_name, size, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    media.ref,
    kind,
    media.mimetype,
    media.fileName,
    media.size,
    now,
  );
}

/** Puts bytes the object itself holds (a profile picture) into R2 as an upload, and names them. */
export async function storeUpload(
  ctx: SessionContext,
  bytes: Uint8Array,
  mimetype: string,
  fileName: string | null,
): Promise<string> {
  const ref = newMediaRef();
  await ctx.env.MEDIA.put(
    mediaKey(ctx.sessionId, ref),
    bytes,
    putOptions({ mimetype, fileName, kind: "upload" }),
  );
  recordMedia(ctx.sql, "upload", { ref, mimetype, fileName, size: bytes.byteLength }, ctx.now());
  return ref;
}

/**
 * The file named `ref`, when its bytes are in R2 (moved there first if they were still in this
 * object's own storage). Null when it was never stored, or swept.
 */
export async function findMedia(ctx: SessionContext, ref: string): Promise<StoredMedia | null> {
  const row = ctx.sql
    .exec<MediaRow>("SELECT ref, kind, mimetype, file_name, size FROM media WHERE ref = ?", ref)
    .toArray()[0];
  if (!row) return null;
  const key = mediaKey(ctx.sessionId, ref);
  if (hasLegacyParts(ctx.sql, ref)) await moveLegacyToR2(ctx, row, key);
  else if (!(await ctx.env.MEDIA.head(key))) {
    forgetMedia(ctx.sql, ref);
    return null;
  }
  return { ref, mimetype: row.mimetype, fileName: row.file_name, size: row.size };
}

/**
 * A file the bridge has just put in R2 (`media.download`): its row is written from what the object
 * says of itself, so size and type are what was stored, not what was announced.
 */
export async function adoptDownloaded(ctx: SessionContext, ref: string): Promise<StoredMedia | null> {
  const object = await ctx.env.MEDIA.head(mediaKey(ctx.sessionId, ref));
  if (!object) return null;
  const { mimetype, fileName, size } = metaOf(object);
  const media = { ref, mimetype, fileName, size };
  recordMedia(ctx.sql, "download", media, ctx.now());
  return media;
}

/** Removes an upload once sent (never a received file a sticker was made from). */
export async function deleteUpload(ctx: SessionContext, ref: string): Promise<void> {
  const upload = ctx.sql.exec("SELECT 1 FROM media WHERE ref = ? AND kind = 'upload'", ref).toArray();
  if (upload.length === 0) return;
  forgetMedia(ctx.sql, ref);
  await ctx.env.MEDIA.delete(mediaKey(ctx.sessionId, ref));
}

/** Drops the row (and any legacy bytes) of a file, and every message's link to it. */
export function forgetMedia(sql: SqlStorage, ref: string): void {
  sql.exec("DELETE FROM media_parts WHERE ref = ?", ref);
  sql.exec("DELETE FROM media WHERE ref = ?", ref);
  sql.exec("UPDATE messages SET media_ref = NULL WHERE media_ref = ?", ref);
}

function hasLegacyParts(sql: SqlStorage, ref: string): boolean {
  return sql.exec("SELECT 1 FROM media_parts WHERE ref = ? LIMIT 1", ref).toArray().length > 0;
}

/** One legacy file (at most 16 MiB, the old limit) written to R2 whole, then its parts dropped. */
async function moveLegacyToR2(ctx: SessionContext, row: MediaRow, key: string): Promise<void> {
  const bytes = new Uint8Array(row.size);
  let offset = 0;
  for (const part of ctx.sql.exec<{ bytes: ArrayBuffer }>(
    "SELECT bytes FROM media_parts WHERE ref = ? ORDER BY part",
    row.ref,
  )) {
    const chunk = new Uint8Array(part.bytes);
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  const kind: StoredKind = row.kind === "upload" ? "upload" : "download";
  await ctx.env.MEDIA.put(key, bytes, putOptions({ mimetype: row.mimetype, fileName: row.file_name, kind }));
  ctx.sql.exec("DELETE FROM media_parts WHERE ref = ?", row.ref);
}
