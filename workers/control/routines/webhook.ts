import { createRoute } from "@hono/zod-openapi";
import { and, eq, lt } from "drizzle-orm";
import type { Context } from "hono";
import { hmacSha256, timingSafeEqual, toHex } from "../../auth/crypto";
import { open } from "../../auth/secret-box";
import type { AppEnv } from "../../core/env";
import { database } from "../../db/client";
import { type JsonObject, routines, routineTriggerReplays, routineTriggers } from "../../db/schema";
import { ApiError, badRequest, conflict, notFound, titleOf, unauthorized } from "../../http/errors";
import { controlError, createRouter, json } from "../../http/openapi";
import { runsQueued } from "../wakes";
import { dispatchRoutineRun, violates } from "./dispatch";
import { PublicTriggerParamSchema, RoutineRunSchema } from "./schemas";
import { routineRunResource } from "./store";

/**
 * The public fire endpoint of webhook triggers. No credentials: the caller proves it holds the
 * trigger's signing secret with an HMAC over the timestamp and the raw body.
 */
export const routineWebhookRoutes = createRouter();

export const SIGNATURE_HEADER = "X-Platform-Signature";
export const TIMESTAMP_HEADER = "X-Platform-Timestamp";
export const MAX_FIRE_BODY_BYTES = 64 * 1024;
/** Timestamps above this are milliseconds (1e12 ms is 2001; 1e12 s is year 33658). */
const MS_TIMESTAMP_THRESHOLD = 1e12;

async function rawBody(c: Context<AppEnv>): Promise<string> {
  const bytes = await c.req.arrayBuffer();
  if (bytes.byteLength > MAX_FIRE_BODY_BYTES)
    throw new ApiError(413, titleOf(413), `Request body exceeds ${MAX_FIRE_BODY_BYTES} bytes`);
  return new TextDecoder().decode(bytes);
}

/** The body as the run's payload: any JSON; a non-object value is kept as `{value}`. Empty: none. */
function payloadOf(body: string): JsonObject | null {
  if (body.trim() === "") return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw badRequest("The body must be JSON");
  }
  if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as JsonObject;
  return { value: parsed };
}

/** Unix seconds from the header (seconds or ms), or a 401 when missing, malformed or outside the window. */
function checkTimestamp(header: string | undefined, windowSec: number, nowMs: number): string {
  if (!header || !/^\d{1,16}$/.test(header.trim()))
    throw unauthorized(`Missing or invalid ${TIMESTAMP_HEADER}`);
  const value = Number(header.trim());
  const seconds = value > MS_TIMESTAMP_THRESHOLD ? value / 1000 : value;
  if (Math.abs(nowMs / 1000 - seconds) > windowSec)
    throw unauthorized(`${TIMESTAMP_HEADER} is outside the ${windowSec} s replay window`);
  return header.trim();
}

/** `sha256=<hex>` (the prefix may be omitted), compared in constant time; the hex on success. */
async function checkSignature(header: string | undefined, secret: string, timestamp: string, body: string) {
  const presented = header
    ?.trim()
    .replace(/^sha256=/i, "")
    .toLowerCase();
  if (!presented) throw unauthorized(`Missing ${SIGNATURE_HEADER}`);
  const expected = toHex(await hmacSha256(secret, `${timestamp}.${body}`));
  if (!(await timingSafeEqual(presented, expected))) throw unauthorized(`Invalid ${SIGNATURE_HEADER}`);
  return expected;
}

const findByPublicId = (c: Context<AppEnv>, publicId: string) =>
  database(c.env.DB)
    .select({ trigger: routineTriggers, routine: routines })
    .from(routineTriggers)
    .innerJoin(routines, eq(routines.id, routineTriggers.routineId))
    .where(eq(routineTriggers.publicId, publicId))
    .get();

routineWebhookRoutes.openapi(
  createRoute({
    method: "post",
    path: "/routine-triggers/public/{publicId}/fire",
    tags: ["Routines"],
    summary: "Fire a webhook trigger (public; signed with the trigger's secret)",
    description:
      `No credentials. Send \`${SIGNATURE_HEADER}: sha256=<hex HMAC-SHA256(secret, "<timestamp>." + rawBody)>\` ` +
      `and \`${TIMESTAMP_HEADER}\` (unix seconds; values above 1e12 are read as ms). A timestamp outside the ` +
      "trigger's replayWindowSec (default 300) or a bad or missing signature → 401; a signature already " +
      "accepted → 409 `Webhook replay detected`. The body (≤ 64 KiB, any JSON, may be empty) is stored as " +
      "the run's payload; non-JSON → 400. Unknown publicId or not a webhook trigger → 404; a disabled " +
      "trigger or a routine that is not active → 409.",
    request: { params: PublicTriggerParamSchema },
    responses: {
      202: json(RoutineRunSchema, "The routine run"),
      400: controlError("The body is not JSON"),
      401: controlError("Missing, invalid or stale signature"),
      404: controlError("Unknown publicId, or not a webhook trigger"),
      409: controlError("Replay, disabled trigger or inactive routine"),
      413: controlError("Body larger than 64 KiB"),
    },
  }),
  async (c) => {
    const now = Date.now();
    const found = await findByPublicId(c, c.req.valid("param").publicId);
    const { trigger, routine } = found ?? {};
    if (!trigger || !routine || trigger.kind !== "webhook" || !trigger.secretCiphertext)
      throw notFound("Routine trigger not found");
    const body = await rawBody(c);
    const window = trigger.replayWindowSec ?? 300;
    const timestamp = checkTimestamp(c.req.header(TIMESTAMP_HEADER), window, now);
    const secret = await open(c.env.SECRETS_MASTER_KEY, trigger.secretCiphertext, trigger.id);
    const signature = await checkSignature(c.req.header(SIGNATURE_HEADER), secret, timestamp, body);
    if (!trigger.enabled || routine.status !== "active") throw conflict("Routine trigger is not active");
    const payload = payloadOf(body);
    const db = database(c.env.DB);
    // The replay record commits with the run: a signature is spent only by a run that happened. Rows
    // older than two windows can go: their timestamps fail the window check anyway.
    const guard = [
      db
        .delete(routineTriggerReplays)
        .where(
          and(
            eq(routineTriggerReplays.triggerId, trigger.id),
            lt(routineTriggerReplays.createdAt, now - 2 * window * 1000),
          ),
        ),
      db.insert(routineTriggerReplays).values({ triggerId: trigger.id, signature, createdAt: now }),
    ];
    try {
      const { run, queued } = await dispatchRoutineRun(
        db,
        routine,
        { source: "webhook", triggerId: trigger.id, scheduledFor: null, payload, actor: null, guard },
        now,
      );
      if (queued) c.executionCtx.waitUntil(runsQueued(c.env, new URL(c.req.url).origin));
      return c.json(routineRunResource(run), 202);
    } catch (error) {
      if (violates(error, "routine_trigger_replays")) throw conflict("Webhook replay detected");
      throw error;
    }
  },
);
