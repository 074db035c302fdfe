/** Test helpers for media that may live in memory or on disk, and for downloads handed over as streams. */
import { readFile } from "node:fs/promises";
import type { PerformResult, PreparedMedia } from "../../../bridge/src/protocol/seam.ts";

/** The bytes of prepared media, wherever they are (read before the spooled file is released). */
export async function heldBytes(media: PreparedMedia | null): Promise<Buffer> {
  if (!media) throw new Error("no media");
  return "file" in media ? readFile(media.file.path) : Buffer.from(media.bytes);
}

/** Everything a `media.download` result streams, read to the end. */
export async function drained(result: PerformResult): Promise<Buffer> {
  if (!result.download) throw new Error("no download");
  const chunks: Uint8Array[] = [];
  for await (const chunk of result.download.chunks) chunks.push(chunk);
  return Buffer.concat(chunks);
}
