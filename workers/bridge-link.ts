import { type Context, Hono } from "hono";
import { z } from "zod";
import { MEDIA_MAX_BYTES, MEDIA_PART_BYTES } from "../bridge/src/protocol/messaging";
import { fleetObject } from "../durable-objects/fleet/contract";
import { sessionObject } from "../durable-objects/session/contract";
import type { Env } from "./core/env";
import { database } from "./db/client";
import { BRIDGE_ID_PATTERN, bridgeForCredential, touchCredential } from "./gateway/bridges";
import { badRequest, conflict, forbidden, notFound, unauthorized } from "./http/errors";
import { relayUpgrade, requireUpgrade } from "./http/upgrade";
import { bodyOfKnownLength, type MediaMeta, mediaKey, putOptions, readPart } from "./media/objects";

/**
 * Where WhatsApp bridges dial in, each with `Authorization: Bearer <its credential>` (gateway/bridges):
 * the credential names the one bridge id it may claim, and `BRIDGE_TOKEN` only opens the local
 * default bridge. Bridges never run agent commands: runners dial their own link
 * (control/runners/link.ts) with their own tokens. The fleet and session endpoints are WebSocket
 * upgrades handed to a Durable Object, which owns the socket (Hibernation API); the media endpoints
 * move file bytes that are too big for socket frames, and only for the bridge holding the session.
 */
type BridgeLinkEnv = { Bindings: Env; Variables: { bridge: string } };
export const bridgeLinkRoutes = new Hono<BridgeLinkEnv>();

const BridgeIdSchema = z.string().regex(BRIDGE_ID_PATTERN);
const FleetQuerySchema = z.object({
  bridge: BridgeIdSchema,
  capacity: z.coerce.number().int().min(1).max(100_000),
  /** The bridge process's id for its fleet link: its own redial replaces a link the edge still holds. */
  instance: z
    .string()
    .regex(/^[A-Za-z0-9-]{8,64}$/)
    .optional(),
});
const SessionQuerySchema = z.object({ bridge: BridgeIdSchema });

bridgeLinkRoutes.use("*", async (c, next) => {
  const presented = c.req.header("Authorization")?.replace(/^Bearer\s+/i, "") ?? "";
  const db = database(c.env.DB);
  const bridge = presented ? await bridgeForCredential(db, presented, c.env.BRIDGE_TOKEN) : null;
  if (!bridge) throw unauthorized("Invalid bridge credential");
  c.set("bridge", bridge);
  c.executionCtx.waitUntil(touchCredential(db, bridge).catch(() => undefined));
  return next();
});

/** The bridge a dial claims must be the one its credential names. */
function claimedBridge<T extends { bridge: string }>(c: Context<BridgeLinkEnv>, query: T): T {
  if (query.bridge !== c.get("bridge"))
    throw forbidden(`This credential belongs to bridge "${c.get("bridge")}", not "${query.bridge}"`);
  return query;
}

function queryOrReject<T>(schema: z.ZodType<T>, query: Record<string, string>): T {
  const parsed = schema.safeParse(query);
  if (!parsed.success)
    throw badRequest(`Invalid bridge query: ${parsed.error.issues.map((i) => i.path.join(".")).join(", ")}`);
  return parsed.data;
}

bridgeLinkRoutes.use("/fleet", requireUpgrade);
bridgeLinkRoutes.use("/sessions/:sessionId", requireUpgrade);

bridgeLinkRoutes.get("/fleet", (c) => {
  claimedBridge(c, queryOrReject(FleetQuerySchema, c.req.query()));
  return relayUpgrade(fleetObject(c.env).fetch(c.req.raw));
});

bridgeLinkRoutes.get("/sessions/:sessionId", async (c) => {
  claimedBridge(c, queryOrReject(SessionQuerySchema, c.req.query()));
  const sessionId = c.req.param("sessionId");
  await assertSessionExists(c, sessionId);
  return relayUpgrade(sessionObject(c.env, sessionId).fetch(c.req.raw));
});

const MediaParamsSchema = z.object({
  sessionId: z.string().min(1).max(64),
  ref: z.string().regex(/^[A-Za-z0-9_-]{8,64}$/),
});
const SentParamsSchema = z.object({
  sessionId: z.string().min(1).max(64),
  messageId: z.string().min(1).max(128),
});

/** 404 for an id no session has: its object is never made (a bridge names sessions by internal id). */
async function assertSessionExists(c: Context<BridgeLinkEnv>, sessionId: string): Promise<void> {
  const exists = await c.env.DB.prepare("SELECT 1 FROM sessions WHERE id = ?").bind(sessionId).first();
  if (!exists) throw notFound("Session not found");
}

/** Media moves only for the bridge that holds the session's lease: the others never see its files. */
async function heldSession(c: Context<BridgeLinkEnv>) {
  const params = MediaParamsSchema.safeParse(c.req.param());
  if (!params.success) throw badRequest("Invalid media reference");
  return { ...params.data, stub: await leasedTo(c, params.data.sessionId) };
}

/** The session's object, when the calling bridge holds its lease (409 otherwise, 404 if unknown). */
async function leasedTo(c: Context<BridgeLinkEnv>, sessionId: string) {
  await assertSessionExists(c, sessionId);
  const stub = sessionObject(c.env, sessionId);
  if ((await stub.leaseHolder(sessionId)) !== c.get("bridge"))
    throw conflict("This bridge does not hold the session's lease");
  return stub;
}

/**
 * A message this account sent, as stored (`raw`): the bridge answers a recipient's resend request
 * (retry receipt) from it when the message is no longer in its memory (sentMessagePath).
 */
bridgeLinkRoutes.get("/sessions/:sessionId/sent/:messageId", async (c) => {
  const params = SentParamsSchema.safeParse(c.req.param());
  if (!params.success) throw badRequest("Invalid message reference");
  const stub = await leasedTo(c, params.data.sessionId);
  const raw = await stub.sentMessage(params.data.sessionId, params.data.messageId);
  if (raw === null) throw notFound("No such sent message");
  // The record is stored as JSON text; it goes out as it is.
  return new Response(`{"raw":${raw}}`, { headers: { "Content-Type": "application/json" } });
});

/** An upload waiting to be sent (or a received file a sticker is made of): streamed from R2. */
bridgeLinkRoutes.get("/sessions/:sessionId/media/:ref", async (c) => {
  const { sessionId, ref, stub } = await heldSession(c);
  const media = await stub.media(sessionId, ref);
  const object = media ? await c.env.MEDIA.get(mediaKey(sessionId, ref)) : null;
  if (!media || !object) throw notFound("No such media");
  return new Response(object.body, {
    headers: {
      "Content-Type": media.mimetype,
      "Content-Length": String(object.size),
      ...(media.fileName ? { "X-File-Name": encodeURIComponent(media.fileName) } : {}),
    },
  });
});

/**
 * Media the bridge downloaded from WhatsApp for a received message, when it fits in one part; larger
 * files come in parts (below). The session's object names it once the download operation answers.
 */
bridgeLinkRoutes.put("/sessions/:sessionId/media/:ref", async (c) => {
  const { sessionId, ref } = await heldSession(c);
  await c.env.MEDIA.put(mediaKey(sessionId, ref), await partBody(c), putOptions(downloadMeta(c)));
  return c.body(null, 204);
});

bridgeLinkRoutes.post("/sessions/:sessionId/media/:ref/parts", async (c) => {
  const { sessionId, ref } = await heldSession(c);
  const upload = await c.env.MEDIA.createMultipartUpload(
    mediaKey(sessionId, ref),
    putOptions(downloadMeta(c)),
  );
  return c.json({ uploadId: upload.uploadId });
});

const MAX_PARTS = Math.ceil(MEDIA_MAX_BYTES / MEDIA_PART_BYTES);
const PartNumberSchema = z.coerce.number().int().min(1).max(MAX_PARTS);
const UploadIdSchema = z.string().min(1).max(1024);
const CompleteSchema = z.object({
  parts: z
    .array(z.object({ partNumber: PartNumberSchema, etag: z.string().min(1).max(256) }))
    .min(1)
    .max(MAX_PARTS),
});

/** The open multipart upload a part request names (its id came from the POST above). */
async function openUpload(c: Context<BridgeLinkEnv>) {
  const { sessionId, ref } = await heldSession(c);
  const uploadId = UploadIdSchema.safeParse(c.req.query("uploadId"));
  if (!uploadId.success) throw badRequest("uploadId is required");
  return c.env.MEDIA.resumeMultipartUpload(mediaKey(sessionId, ref), uploadId.data);
}

bridgeLinkRoutes.put("/sessions/:sessionId/media/:ref/parts/:partNumber", async (c) => {
  const partNumber = PartNumberSchema.safeParse(c.req.param("partNumber"));
  if (!partNumber.success) throw badRequest(`partNumber must be 1 to ${MAX_PARTS}`);
  const upload = await openUpload(c);
  const part = await upload.uploadPart(partNumber.data, await partBody(c)).catch(() => {
    throw badRequest("No such upload, or a part R2 refused");
  });
  return c.json({ etag: part.etag });
});

bridgeLinkRoutes.post("/sessions/:sessionId/media/:ref/parts/complete", async (c) => {
  const upload = await openUpload(c);
  const body = CompleteSchema.safeParse(await c.req.json().catch(() => null));
  if (!body.success) throw badRequest("parts: [{partNumber, etag}] is required");
  await upload.complete(body.data.parts).catch(() => {
    throw badRequest("The upload could not be completed (missing or uneven parts)");
  });
  return c.body(null, 204);
});

bridgeLinkRoutes.delete("/sessions/:sessionId/media/:ref/parts", async (c) => {
  const upload = await openUpload(c);
  await upload.abort().catch(() => undefined);
  return c.body(null, 204);
});

/**
 * One part's bytes for R2: with a Content-Length within a part (what the bridge sends), the request
 * body itself, which R2 reads natively without a copy in JavaScript; otherwise read here, capped.
 */
async function partBody(c: Context<BridgeLinkEnv>): Promise<ReadableStream | Uint8Array> {
  return bodyOfKnownLength(c.req.raw, MEDIA_PART_BYTES) ?? readPart(c.req.raw.body, MEDIA_PART_BYTES);
}

/** What the bridge says of a downloaded file: its type and, URI-encoded, its name. */
function downloadMeta(c: Context<BridgeLinkEnv>): MediaMeta {
  const fileName = c.req.header("X-File-Name");
  return {
    mimetype: (c.req.header("Content-Type") ?? "application/octet-stream").slice(0, 128),
    fileName: fileName ? safeDecode(fileName).slice(0, 256) : null,
    kind: "download",
  };
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw badRequest("X-File-Name must be URI-encoded");
  }
}
