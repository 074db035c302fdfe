/**
 * The `wa` command: one WhatsApp operation (operations.ts) on the session's connected socket, with its
 * media fetched before (and a spooled file removed after) and, for `media.download`, streamed to the
 * edge's store as it downloads. A refusal answers with the HTTP-like status the edge passes on to its
 * caller; anything unexpected is a 500.
 */

import { uploadToEdge } from "../media/edge-upload.ts";
import { type EdgeMedia, prepareMedia, tooLarge } from "../media/media.ts";
import { releaseMedia } from "../media/spool.ts";
import { MEDIA_KIND_LIMITS, MEDIA_MAX_BYTES } from "../protocol/messaging.ts";
import { type Operation, OperationSchema } from "../protocol/operations.ts";
import { OperationError, type PerformResult, type WhatsAppSocket } from "../protocol/seam.ts";
import { errorMessage } from "../shared/log.ts";
import { fail, type Outcome, ok } from "./command-ledger.ts";

export const NOT_CONNECTED = "WhatsApp is not connected";

export interface OperationContext {
  edge: EdgeMedia;
  /** The socket while WhatsApp is connected, else null (asked again after the media fetch). */
  socket(): WhatsAppSocket | null;
}

export async function runOperation(
  args: Record<string, unknown>,
  context: OperationContext,
): Promise<Outcome> {
  const parsed = OperationSchema.safeParse(args);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
    return fail(`invalid operation: ${where}${issue?.message ?? "bad arguments"}`, 400);
  }
  const operation = parsed.data;
  // Checked before fetching media, so a disconnected session does not download for nothing.
  if (!context.socket()) return fail(NOT_CONNECTED, 503);
  try {
    if (operation.op === "media.download") return ok(await download(operation, context));
    const media = await prepareMedia(operation, context.edge);
    try {
      const socket = context.socket();
      if (!socket) return fail(NOT_CONNECTED, 503);
      return ok((await socket.perform(operation, media)).data);
    } finally {
      await releaseMedia(media);
    }
  } catch (error) {
    if (error instanceof OperationError) return fail(error.message, error.status);
    return fail(errorMessage(error), 500);
  }
}

type Download = Extract<Operation, { op: "media.download" }>;

/** The most a download may be: the edge's `maxBytes` for its kind, else the kind's default. */
export function downloadCap(operation: Download): number {
  if (operation.maxBytes) return operation.maxBytes;
  const { type } = operation.message.content;
  return type in MEDIA_KIND_LIMITS
    ? MEDIA_KIND_LIMITS[type as keyof typeof MEDIA_KIND_LIMITS]
    : MEDIA_MAX_BYTES;
}

/** The media's size as its message declares it, when it does: a file over the cap is not fetched. */
function declaredSize(operation: Download): number | undefined {
  const content = operation.message.content;
  return "media" in content ? content.media.size : undefined;
}

/** `media.download`: WhatsApp's decrypted stream, straight to the edge's store in parts. */
async function download(operation: Download, context: OperationContext): Promise<PerformResult["data"]> {
  const cap = downloadCap(operation);
  if ((declaredSize(operation) ?? 0) > cap) throw tooLarge(cap);
  const socket = context.socket();
  if (!socket) throw new OperationError(503, NOT_CONNECTED);
  const result = await socket.perform(operation, null);
  if (!result.download) throw new Error("the network returned no media");
  const { mimetype, fileName } = result.download;
  const size = await uploadToEdge(context.edge, operation.ref, result.download, cap);
  return { mimetype, size, ...(fileName ? { fileName } : {}) };
}
