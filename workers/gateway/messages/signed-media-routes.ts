import { createRoute, z } from "@hono/zod-openapi";
import { ApiError, notFound } from "../../http/errors";
import { createRouter, errorResponse } from "../../http/openapi";
import { serveMedia } from "../../media/serve";
import { checkMediaLink } from "../../media/signed-url";
import { callSession } from "../sessions";

/**
 * `GET /api/media/{sessionId}/{messageId}?expires=&signature=`: a message's media by signed link, with
 * no API key (workers/media/signed-url.ts). The link is the credential: it names one message of one session, and
 * stops working when it expires or when the session is deleted.
 */
export const signedMediaRoutes = createRouter();

const LinkParamsSchema = z.object({
  sessionId: z.string().min(1).max(64),
  messageId: z.string().min(1).max(128),
});
const LinkQuerySchema = z.object({
  expires: z.coerce.number().int().nonnegative().max(1e11),
  signature: z.string().min(1).max(128),
});

signedMediaRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{sessionId}/{messageId}",
    tags: ["Messages"],
    summary: "Download a message's media by signed link (no API key)",
    description:
      "The links webhooks carry (`signedMediaUrl`) and `GET /api/messages/{sessionId}/download/{messageId}/media/link` makes. 403 when the link was changed or has expired.",
    request: { params: LinkParamsSchema, query: LinkQuerySchema },
    responses: {
      200: { description: "The file", content: { "application/octet-stream": { schema: z.string() } } },
      400: errorResponse("Malformed link"),
      403: errorResponse("The link was changed or has expired"),
      404: errorResponse("The session, the message or its media is gone"),
      503: errorResponse("The session is not connected, and the file was never fetched from WhatsApp"),
    },
  }),
  async (c) => {
    const { sessionId, messageId } = c.req.valid("param");
    const { expires, signature } = c.req.valid("query");
    const check = await checkMediaLink(c.env, { sessionId, messageId, expires, signature }, Date.now());
    if (check !== "valid")
      throw new ApiError(403, "Forbidden", check === "expired" ? "This link has expired" : "Invalid link");
    const session = await c.env.DB.prepare("SELECT id FROM sessions WHERE id = ?")
      .bind(sessionId)
      .first<{ id: string }>();
    if (!session) throw notFound("Session not found");
    const media = await callSession(c.env, session, "media.download", { messageId });
    return serveMedia(c.env, session.id, media, messageId);
  },
);
