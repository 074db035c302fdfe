/**
 * The `wa` command: one WhatsApp operation (operations.ts) on the session's connected socket, with its
 * media fetched before and, for `media.download`, stored at the edge after. A refusal answers with the
 * HTTP-like status the edge passes on to its caller; anything unexpected is a 500.
 */

import { type EdgeMedia, prepareMedia, storeMedia } from "../media/media.ts";
import { OperationSchema } from "../protocol/operations.ts";
import { OperationError, type WhatsAppSocket } from "../protocol/seam.ts";
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
    const media = await prepareMedia(operation, context.edge);
    const socket = context.socket();
    if (!socket) return fail(NOT_CONNECTED, 503);
    const result = await socket.perform(operation, media);
    if (operation.op !== "media.download") return ok(result.data);
    if (!result.media) throw new Error("the network returned no media");
    await storeMedia(context.edge, operation.ref, result.media);
    const { mimetype, fileName, bytes } = result.media;
    return ok(result.data ?? { mimetype, size: bytes.byteLength, ...(fileName ? { fileName } : {}) });
  } catch (error) {
    if (error instanceof OperationError) return fail(error.message, error.status);
    return fail(errorMessage(error), 500);
  }
}
