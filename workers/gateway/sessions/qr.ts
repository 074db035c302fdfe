import { createRoute, z } from "@hono/zod-openapi";
import { type SessionSnapshot, sessionObject } from "../../../durable-objects/session/contract";
import type { Env } from "../../core/env";
import { database } from "../../db/client";
import { ApiError } from "../../http/errors";
import { authenticated, createRouter, errorResponse, gatewayErrors, json } from "../../http/openapi";
import { QrSchema, SessionIdParamsSchema, sessionErrorResponses } from "./schemas";
import { loadAccessibleSession } from "./store";

/**
 * `GET /api/sessions/{id}/qr`. Right after `start` the bridge has not shown a QR yet (it is opening
 * the WhatsApp socket, about half a second): the request waits for it, bounded, so a script that
 * starts and then asks for the QR gets it; past the bound it answers 202 with Retry-After.
 */
export const qrRoutes = createRouter();

const DEFAULT_QR_WAIT_MS = 10_000;
const RETRY_AFTER_SECONDS = 2;

/** `QR_WAIT_MS` overrides how long a request waits for the first QR (tests shorten it). */
function qrWaitMs(env: Env): number {
  const configured = Number(env.QR_WAIT_MS);
  return Number.isFinite(configured) && configured >= 0 ? configured : DEFAULT_QR_WAIT_MS;
}

export const QrPendingSchema = z
  .object({
    success: z.literal(false),
    state: z.enum(["starting", "reconnecting"]),
    message: z.string().openapi({ example: "The session is starting; no QR yet, retry in 2 s" }),
  })
  .openapi("SessionQrPending");

qrRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{id}/qr",
    tags: ["Sessions"],
    summary: "The current QR code to link the phone",
    description:
      "Not wrapped in the envelope (as the reference gateway). Poll it: a new QR arrives about every 20 s. " +
      "While the session is starting (or reconnecting) and shows no QR yet, the request waits up to 10 s " +
      "for the first one; if none comes it answers 202 with `Retry-After`. 404 means no QR will come " +
      "until someone acts: the session is stopped, logged out or failed (start it), or WhatsApp cannot " +
      "be reached (`error` names why).",
    security: authenticated,
    request: { params: SessionIdParamsSchema },
    responses: {
      200: json(QrSchema, "QR text and PNG data URL"),
      202: {
        ...json(
          QrPendingSchema,
          "The session is starting and has no QR yet; retry after `Retry-After` seconds",
        ),
        headers: { "Retry-After": { schema: { type: "string" }, description: "Seconds to wait" } },
      },
      400: errorResponse("Already connected"),
      401: gatewayErrors[401],
      403: sessionErrorResponses[403],
      404: errorResponse("Session not found, or not started (no QR will come until it is started)"),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const session = await loadAccessibleSession(database(c.env.DB), c.get("principal"), id, "read");
    const live = await sessionObject(c.env, session.id).awaitQr(session.id, qrWaitMs(c.env));
    if (live.state === "connected")
      throw new ApiError(400, "Already connected", "The session is already connected");
    if (live.qr && live.qrImage)
      return c.json({ success: true as const, qr: live.qr, base64: live.qrImage }, 200);
    if (live.state === "starting" || live.state === "reconnecting") {
      c.header("Retry-After", String(RETRY_AFTER_SECONDS));
      return c.json({ success: false as const, state: live.state, message: pendingMessage(live) }, 202);
    }
    throw new ApiError(404, "QR code not available yet", whyNoQr(live, id));
  },
);

function pendingMessage(live: SessionSnapshot): string {
  const waiting = live.hasInstance ? "the bridge is opening WhatsApp" : "waiting for a bridge to take it";
  return `The session is ${live.state} (${waiting}); no QR yet, retry in ${RETRY_AFTER_SECONDS} s`;
}

/** Why a session in a state that shows no QR has none, and what brings one. */
function whyNoQr(live: SessionSnapshot, id: string): string {
  const start = `POST /api/sessions/${id}/start`;
  switch (live.state) {
    case "network_error":
      return `WhatsApp cannot be reached from the bridge (${live.lastDisconnect ?? "unknown"}); it keeps retrying`;
    case "failed":
      return `WhatsApp refused the session (${live.lastDisconnect ?? "unknown"}); fix that, then ${start}`;
    case "logged_out":
      return `The session is logged out; ${start} to show a new QR`;
    default:
      return `The session is ${live.state}; ${start} first`;
  }
}
