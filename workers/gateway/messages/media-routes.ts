import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../core/env";
import { ok } from "../../http/envelope";
import { ApiError, badRequest } from "../../http/errors";
import { authenticated, createRouter, errorResponse, gatewayOk, json } from "../../http/openapi";
import { isJsonType } from "../../http/uploads";
import { describeBytes, limitOf, mediaLimits } from "../../media/limits";
import { boundaryOf, readStreamedForm } from "../../media/multipart";
import {
  bodyOfKnownLength,
  chunksOf,
  mediaKey,
  newMediaRef,
  putOptions,
  tooLarge,
  writeMediaStream,
} from "../../media/objects";
import { serveMedia } from "../../media/serve";
import { DEFAULT_LINK_SECONDS, MAX_LINK_SECONDS, signMediaLink } from "../../media/signed-url";
import { accessibleSession, callSession } from "../sessions";
import { ChatParamsSchema, MessageResourceSchema, messagingErrors, SessionParamSchema } from "./schemas";

/**
 * Media in and out of a session: uploading a file to send (streamed into R2 as it arrives, never held
 * whole), downloading a message's media (streamed from R2), and signed links to it that work without
 * a key until they expire (workers/media).
 */
export const mediaMessageRoutes = createRouter();
const tags = ["Messages"];

const MEDIA_KINDS = ["image", "video", "audio", "voice", "document", "sticker"] as const;
type UploadKind = (typeof MEDIA_KINDS)[number];

const UploadQuerySchema = z.object({
  type: z.enum(MEDIA_KINDS).optional().openapi({ description: "The kind, for a raw body (default image)" }),
  fileName: z.string().min(1).max(256).optional().openapi({ description: "A raw body's file name" }),
  caption: z.string().max(4096).optional().openapi({ description: "A raw body's caption" }),
});

/** Documented, not validated by the router: a validator would read the whole form into memory. */
const uploadFormSchema: { type: "object"; required: string[]; properties: Record<string, object> } = {
  type: "object",
  required: ["file"],
  properties: {
    file: { type: "string", format: "binary" },
    type: { type: "string", enum: [...MEDIA_KINDS], default: "image" },
    caption: { type: "string", maxLength: 4096 },
  },
};

mediaMessageRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/{jid}/media",
    tags,
    summary: "Upload and send a media file (multipart/form-data, or the raw file as the body)",
    description:
      "The file streams into storage as it arrives. As multipart/form-data: `file`, `type`, `caption`. As a " +
      "raw body (its Content-Type is the file's): `?type=&fileName=&caption=`. `voice` is sent as a voice note. " +
      "Limits per kind are WhatsApp's (images and audio 16 MiB, stickers 1 MiB, videos and documents 2 GiB; an " +
      "operator may set others): a larger file answers 413 and nothing is sent. On Cloudflare one request " +
      "also carries at most the plan's body limit (100 MB on Free and Pro): send larger files by URL.",
    security: authenticated,
    request: {
      params: ChatParamsSchema,
      query: UploadQuerySchema,
      body: {
        content: {
          "multipart/form-data": { schema: uploadFormSchema },
          "application/octet-stream": { schema: { type: "string", format: "binary" } },
        },
        required: true,
      },
    },
    responses: {
      200: json(gatewayOk(MessageResourceSchema), "Sent"),
      ...messagingErrors,
      413: errorResponse("File larger than the limit of its kind"),
      415: errorResponse("A JSON body: send the file itself"),
    },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const upload = await receiveUpload(c, session.id, c.req.valid("query"));
    const message = await callSession(c.env, session, "message.sendUpload", { to: jid, ...upload });
    return c.json(ok("Media sent successfully", message), 200);
  },
);

interface ReceivedUpload {
  kind: UploadKind;
  ref: string;
  size: number;
  mimetype: string;
  fileName: string;
  caption?: string;
}

/** The request's file, stored in R2 under a new ref; a refused one leaves nothing stored. */
async function receiveUpload(
  c: Context<AppEnv>,
  sessionId: string,
  query: z.infer<typeof UploadQuerySchema>,
): Promise<ReceivedUpload> {
  const limits = mediaLimits(c.env.MEDIA_LIMITS_MB);
  const ref = newMediaRef();
  const key = mediaKey(sessionId, ref);
  const boundary = boundaryOf(c.req.header("content-type"));
  if (boundary === null) {
    if (/^multipart\//i.test(c.req.header("content-type") ?? ""))
      throw badRequest("Malformed multipart body");
    if (isJsonType(c.req.header("content-type")))
      throw new ApiError(
        415,
        "Unsupported Media Type",
        "Got application/json: send the file as multipart/form-data, or as the raw body with the file's own Content-Type (and ?type=)",
      );
    const kind = query.type ?? "image";
    const mimetype = (c.req.header("content-type") ?? "application/octet-stream").slice(0, 128);
    const fileName = query.fileName ?? "file";
    const limit = limitOf(limits, kind);
    const known = bodyOfKnownLength(c.req.raw, limit);
    if (known) {
      // A body of known length goes to R2 as it is, read natively (no copy in JavaScript).
      const stored = await c.env.MEDIA.put(key, known, putOptions(uploadMeta(mimetype, fileName))).catch(
        () => {
          throw badRequest("The upload ended before its Content-Length");
        },
      );
      return checked({ kind, ref, size: stored.size, mimetype, fileName, ...captionOf(query.caption) });
    }
    const size = await writeMediaStream(
      c.env.MEDIA,
      key,
      chunksOf(c.req.raw.body),
      uploadMeta(mimetype, fileName),
      limit,
    );
    return checked({ kind, ref, size, mimetype, fileName, ...captionOf(query.caption) });
  }
  // The kind may come after the file, so the file streams in under the largest limit, checked after.
  const largest = Math.max(...Object.values(limits));
  const form = await readStreamedForm(c.req.raw.body ?? new ReadableStream(), boundary, (part, chunks) =>
    writeMediaStream(c.env.MEDIA, key, chunks, uploadMeta(part.contentType, part.fileName), largest),
  );
  const file = form.file;
  try {
    if (file?.part.field !== "file") throw badRequest("file is required");
    const kind = form.fields.get("type") ?? "image";
    if (!(MEDIA_KINDS as readonly string[]).includes(kind))
      throw badRequest(`type must be one of ${MEDIA_KINDS.join(", ")}`);
    const caption = form.fields.get("caption");
    if (caption !== undefined && caption.length > 4096)
      throw badRequest("caption must be text of at most 4096 characters");
    const upload = {
      kind: kind as UploadKind,
      ref,
      size: file.stored,
      mimetype: file.part.contentType.slice(0, 128),
      fileName: file.part.fileName.slice(0, 256) || "file",
      ...captionOf(caption),
    };
    const limit = limitOf(limits, upload.kind);
    if (upload.size > limit) throw tooLarge(limit);
    return checked(upload);
  } catch (error) {
    if (file) await c.env.MEDIA.delete(key);
    throw error;
  }

  async function checked(upload: ReceivedUpload): Promise<ReceivedUpload> {
    if (upload.size > 0) return upload;
    await c.env.MEDIA.delete(key);
    throw badRequest("file is empty");
  }
}

const uploadMeta = (mimetype: string, fileName: string) => ({
  mimetype: mimetype || "application/octet-stream",
  fileName: fileName || "file",
  kind: "upload" as const,
});
const captionOf = (caption: string | undefined) => (caption ? { caption } : {});

const MessageMediaParamsSchema = SessionParamSchema.extend({ messageId: z.string().min(1).max(128) });

mediaMessageRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{sessionId}/download/{messageId}/media",
    tags,
    summary: "Download the media of a stored message (fetched from WhatsApp on first request)",
    security: authenticated,
    request: { params: MessageMediaParamsSchema },
    responses: {
      200: { description: "The file", content: { "application/octet-stream": { schema: z.string() } } },
      ...messagingErrors,
    },
  }),
  async (c) => {
    const { sessionId, messageId } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const media = await callSession(c.env, session, "media.download", { messageId });
    return serveMedia(c.env, session.id, media, messageId);
  },
);

const LinkQuerySchema = z.object({
  expiresIn: z.coerce
    .number()
    .int()
    .min(60)
    .max(MAX_LINK_SECONDS)
    .default(DEFAULT_LINK_SECONDS)
    .openapi({
      description: `Seconds the link works (60 to ${MAX_LINK_SECONDS}; default ${DEFAULT_LINK_SECONDS})`,
    }),
});
const MediaLinkSchema = z
  .object({ url: z.string(), expiresAt: z.string() })
  .openapi("MediaLink", { description: "A link to the media that needs no key until expiresAt" });

mediaMessageRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{sessionId}/download/{messageId}/media/link",
    tags,
    summary: "A signed link to a message's media, for a browser or a service without the API key",
    description: `Anyone holding the link can download the file until it expires, so keep links short-lived; a changed or expired link answers 403. Absolute when PUBLIC_URL is set, else a path on this API. Media up to ${describeBytes(2048 * 1024 * 1024)}.`,
    security: authenticated,
    request: { params: MessageMediaParamsSchema, query: LinkQuerySchema },
    responses: { 200: json(gatewayOk(MediaLinkSchema), "The link"), ...messagingErrors },
  }),
  async (c) => {
    const { sessionId, messageId } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    // Only a message with media gets a link: the same check the download makes, without fetching it.
    await callSession(c.env, session, "media.check", { messageId });
    const link = await signMediaLink(
      c.env,
      session.id,
      messageId,
      c.req.valid("query").expiresIn,
      Date.now(),
    );
    if (!link) throw new ApiError(503, "Service Unavailable", "SECRETS_MASTER_KEY is not configured");
    return c.json(ok("Link created", link), 200);
  },
);
