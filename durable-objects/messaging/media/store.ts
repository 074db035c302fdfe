/**
 * Media bytes held by the SessionDO: uploads waiting to be sent (the bridge fetches them) and media
 * of received messages downloaded on request. Stored in parts because a SQLite row in a Durable Object
 * is capped at 2 MB.
 */
const PART_BYTES = 1024 * 1024;
/** Uploads not sent within this long are dropped on the next write. */
export const UPLOAD_TTL_MS = 60 * 60 * 1000;

export interface StoredMedia {
  bytes: Uint8Array;
  mimetype: string;
  fileName: string | null;
  size: number;
}

export function putMedia(
  sql: SqlStorage,
  ref: string,
  kind: "upload" | "download",
  bytes: Uint8Array,
  mimetype: string,
  fileName: string | null,
  now: number,
): void {
  pruneUploads(sql, now);
  sql.exec("DELETE FROM media_parts WHERE ref = ?", ref);
  sql.exec(
    "INSERT OR REPLACE INTO media (ref, kind, mimetype, file_name, size, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    ref,
    kind,
    mimetype,
    fileName,
    bytes.byteLength,
    now,
  );
  for (let offset = 0, part = 0; offset < bytes.byteLength || part === 0; offset += PART_BYTES, part++) {
    sql.exec(
      "INSERT INTO media_parts (ref, part, bytes) VALUES (?, ?, ?)",
      ref,
      part,
      bytes.slice(offset, offset + PART_BYTES),
    );
  }
}

export function readMedia(sql: SqlStorage, ref: string): StoredMedia | null {
  const meta = sql
    .exec<{ mimetype: string; file_name: string | null; size: number }>(
      "SELECT mimetype, file_name, size FROM media WHERE ref = ?",
      ref,
    )
    .toArray()[0];
  if (!meta) return null;
  const bytes = new Uint8Array(meta.size);
  let offset = 0;
  for (const row of sql.exec<{ bytes: ArrayBuffer }>(
    "SELECT bytes FROM media_parts WHERE ref = ? ORDER BY part",
    ref,
  )) {
    const chunk = new Uint8Array(row.bytes);
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes, mimetype: meta.mimetype, fileName: meta.file_name, size: meta.size };
}

export function deleteMedia(sql: SqlStorage, ref: string): void {
  sql.exec("DELETE FROM media_parts WHERE ref = ?", ref);
  sql.exec("DELETE FROM media WHERE ref = ?", ref);
}

function pruneUploads(sql: SqlStorage, now: number): void {
  const stale = sql
    .exec<{ ref: string }>(
      "SELECT ref FROM media WHERE kind = 'upload' AND created_at < ?",
      now - UPLOAD_TTL_MS,
    )
    .toArray();
  for (const { ref } of stale) deleteMedia(sql, ref);
}

/** A random reference for a stored file (URL-safe; the bridge puts it in a path). */
export function newMediaRef(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}
