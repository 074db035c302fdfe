import type { Context } from "hono";
import type { AppEnv, Env } from "../../core/env";
import { type Db, database } from "../../db/client";
import { knownOrigin, rememberOrigin } from "./notices";
import { type LineRequest, lineRequestOf, sendNoticesSoon } from "./sender";

/**
 * Where a trigger meets the line: after the thing it announces committed, queue the notices and (with
 * a request at hand) try to send them at once. A failure here is logged, never the request's: the
 * approval, question or run is already committed, and the cron sends what was queued.
 */
export type QueueNotices = (db: Db, origin: string, now: number) => Promise<number>;

function logFailure(companyId: string, error: unknown) {
  console.error(
    JSON.stringify({ level: "error", msg: "line notices not queued", companyId, error: String(error) }),
  );
}

/**
 * With a request at hand: queue, and when anything was queued remember the dashboard's address (for
 * the cron's later notices) and send after the answer. Nothing queued costs only `queue`'s own reads.
 */
export async function announce(request: LineRequest, companyId: string, queue: QueueNotices): Promise<void> {
  const db = database(request.env.DB);
  const now = Date.now();
  try {
    if ((await queue(db, request.origin, now)) === 0) return;
    await rememberOrigin(db, companyId, request.origin, now);
    sendNoticesSoon(request, companyId);
  } catch (error) {
    logFailure(companyId, error);
  }
}

/** In a route. */
export async function announceFrom(
  c: Context<AppEnv>,
  companyId: string,
  queue: QueueNotices,
): Promise<void> {
  const request = lineRequestOf(c);
  if (request) await announce(request, companyId, queue);
  else await announceLater(c.env, companyId, queue);
}

/**
 * Where no request is at hand (a Durable Object, the cron): queue only, linking to the address last
 * seen; the cron's pass sends them within the minute.
 */
export async function announceLater(env: Env, companyId: string, queue: QueueNotices): Promise<void> {
  const db = database(env.DB);
  try {
    await queue(db, await knownOrigin(db, companyId), Date.now());
  } catch (error) {
    logFailure(companyId, error);
  }
}

/**
 * For a route whose work may queue notices deep inside (a cost event pausing an agent): remember the
 * dashboard's address first so their links are absolute, then `sendQueuedFrom` after the commit.
 */
export async function rememberOriginFrom(c: Context<AppEnv>, companyId: string): Promise<void> {
  try {
    await rememberOrigin(database(c.env.DB), companyId, new URL(c.req.url).origin, Date.now());
  } catch (error) {
    logFailure(companyId, error);
  }
}

/** Tries the company's due notices after the answer (a pass with nothing due is one query). */
export function sendQueuedFrom(c: Context<AppEnv>, companyId: string): void {
  const request = lineRequestOf(c);
  if (request) sendNoticesSoon(request, companyId);
}
