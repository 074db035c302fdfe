import type { Env } from "../core/env";
import { notFound } from "../http/errors";
import { mediaKey } from "./objects";

/** A stored file as the session's object names it (durable-objects/messaging/media/store.ts). */
export interface MediaLocation {
  ref: string;
  mimetype: string;
  fileName: string | null;
}

/**
 * The file streamed from R2 to the caller (never read whole), as an attachment named after the file or
 * `fallbackName`. Types are served as stored, with nosniff, and never cached by intermediaries.
 */
export async function serveMedia(
  env: Env,
  sessionId: string,
  media: MediaLocation,
  fallbackName: string,
): Promise<Response> {
  const object = await env.MEDIA.get(mediaKey(sessionId, media.ref));
  if (!object) throw notFound("The media is no longer stored");
  const fileName = media.fileName ?? fallbackName;
  return new Response(object.body, {
    status: 200,
    headers: {
      "Content-Type": media.mimetype,
      "Content-Length": String(object.size),
      "Content-Disposition": `attachment; filename*=UTF-8''${encodeURIComponent(fileName)}`,
      "Cache-Control": "private, no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
}
