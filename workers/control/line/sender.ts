import { and, asc, count, eq, gt, lte, min, sql } from "drizzle-orm";
import type { Context } from "hono";
import type { AppEnv, Env } from "../../core/env";
import { onSessionConnected } from "../../core/session-connected";
import { type Db, database } from "../../db/client";
import {
  companyLines,
  type LineNoticeKind,
  type LineNoticeRow,
  lineNotices,
  type MembershipRole,
} from "../../db/schema";
import { type LineOwnerAccess, lineOwnerAccess } from "./access";
import { recipientsFor } from "./directory";
import { knownOrigin } from "./notices";
import { type LineContent, type LineFetch, sendOnLine } from "./send";
import { settledReason } from "./subjects";

/**
 * Sends the line's queued notices (docs/company-line.md "What goes out"): due ones of a company in the
 * order they were queued, each claimed first with a conditional UPDATE so two senders racing (the
 * request's waitUntil and the cron) never send one twice. Runs right after a trigger queues, from the
 * cron every minute, and when the line's session connects again.
 */

/** At most this many notices per member per rolling hour; more wait for the window to move. */
export const NOTICES_PER_MEMBER_PER_HOUR = 10;
const HOUR_MS = 3_600_000;
/** A claimed notice is due again after this if its sender died before recording the outcome. */
export const NOTICE_CLAIM_MS = 5 * 60_000;
/** Notices one pass sends per company at most; the next pass (cron) takes the rest. */
const PASS_LIMIT = 50;
/** Used for the in-process call when no origin is known: routing ignores the host. */
const INTERNAL_ORIGIN = "http://line.internal";

/** Roles that may still receive a kind when it goes out (a member demoted meanwhile is skipped). */
const ROLES_NOW: Partial<Record<LineNoticeKind, MembershipRole[]>> = {
  approvals: ["owner", "member"],
  budget: ["owner"],
};

export interface SendPass {
  sent: number;
  dropped: number;
  failed: number;
  /** The line refused for now (disconnected, not linked): the rest stays queued, in order. */
  lineDown: boolean;
}

type Outcome = "sent" | "dropped" | "failed" | "held" | "taken" | "line_down";

/** The gateway's answers that mean "not now" (no line, disconnected, paced), not "never". */
const isTemporary = (status: number) => status === 409 || status === 429 || status >= 500;

type AppFetch = (request: Request, env: Env, ctx: Context<AppEnv>["executionCtx"]) => Promise<Response>;
let lineAppFetch: AppFetch | undefined;

/** The app registers its own fetch (app.ts), so the line can send from a route's waitUntil. */
export function registerLineAppFetch(appFetch: AppFetch): void {
  lineAppFetch = appFetch;
  onSessionConnected(sendWhenLineReconnects);
}

/**
 * A session came (back) online: if it is a company's line, that company's due notices go out now, in
 * order (those decided meanwhile are dropped by the pass), rather than at the next cron minute.
 */
async function sendWhenLineReconnects(
  env: Env,
  sessionId: string,
  waitUntil: (promise: Promise<unknown>) => void,
): Promise<void> {
  const appFetch = lineAppFetch;
  if (!appFetch) return;
  const db = database(env.DB);
  const line = await db
    .select({ companyId: companyLines.companyId })
    .from(companyLines)
    .where(eq(companyLines.sessionId, sessionId))
    .get();
  if (!line) return;
  const executionCtx = { waitUntil, passThroughOnException: () => {}, props: {} };
  const fetch: LineFetch = (request) => appFetch(request, env, executionCtx);
  waitUntil(
    sendDueNoticesLogged(
      env,
      fetch,
      (await knownOrigin(db, line.companyId)) || INTERNAL_ORIGIN,
      line.companyId,
    ),
  );
}

/** What sending right away needs from the request at hand (a route's, or an MCP tool call's). */
export interface LineRequest {
  env: Env;
  origin: string;
  fetch: LineFetch;
  waitUntil(promise: Promise<unknown>): void;
}

/** A route's request as the line needs it; undefined before the app registered its fetch. */
export function lineRequestOf(c: Context<AppEnv>): LineRequest | undefined {
  const appFetch = lineAppFetch;
  if (!appFetch) return undefined;
  return {
    env: c.env,
    origin: new URL(c.req.url).origin,
    fetch: (request) => appFetch(request, c.env, c.executionCtx),
    waitUntil: (promise) => c.executionCtx.waitUntil(promise),
  };
}

/** After a request queued notices: try them at once, after the answer (waitUntil). */
export function sendNoticesSoon(request: LineRequest, companyId: string): void {
  request.waitUntil(sendDueNoticesLogged(request.env, request.fetch, request.origin, companyId));
}

/** The cron (and a reconnected line): every company with due notices. */
export async function sendAllDueNotices(env: Env, fetch: LineFetch, now = Date.now()): Promise<void> {
  const db = database(env.DB);
  const due = await db
    .selectDistinct({ companyId: lineNotices.companyId })
    .from(lineNotices)
    .where(and(eq(lineNotices.status, "queued"), lte(lineNotices.notBefore, now)))
    .all();
  for (const { companyId } of due)
    await sendDueNoticesLogged(
      env,
      fetch,
      (await knownOrigin(db, companyId)) || INTERNAL_ORIGIN,
      companyId,
      now,
    );
}

async function sendDueNoticesLogged(
  env: Env,
  fetch: LineFetch,
  origin: string,
  companyId: string,
  now = Date.now(),
) {
  try {
    await sendDueNotices(env, fetch, origin, companyId, now);
  } catch (error) {
    console.error(
      JSON.stringify({ level: "error", msg: "line notices pass failed", companyId, error: String(error) }),
    );
  }
}

/** One pass over a company's due notices, oldest first; stops at the first "line down". */
export async function sendDueNotices(
  env: Env,
  fetch: LineFetch,
  origin: string,
  companyId: string,
  now = Date.now(),
): Promise<SendPass> {
  const db = database(env.DB);
  const due = await db
    .select()
    .from(lineNotices)
    .where(
      and(
        eq(lineNotices.companyId, companyId),
        eq(lineNotices.status, "queued"),
        lte(lineNotices.notBefore, now),
      ),
    )
    .orderBy(asc(lineNotices.createdAt), sql`${lineNotices}.rowid`)
    .limit(PASS_LIMIT)
    .all();
  const pass: SendPass = { sent: 0, dropped: 0, failed: 0, lineDown: false };
  // Who sends on the line is read once per pass (three queries), and only if something goes out.
  let access: Promise<LineOwnerAccess> | undefined;
  const lineAccess = () => {
    access ??= lineOwnerAccess(env, companyId);
    return access;
  };
  for (const notice of due) {
    const outcome = await sendOne(env, db, fetch, origin, notice, now, lineAccess);
    if (outcome === "sent" || outcome === "dropped" || outcome === "failed") pass[outcome]++;
    if (outcome === "line_down") {
      pass.lineDown = true;
      break;
    }
  }
  return pass;
}

/**
 * How far ahead an earlier notice's not_before still counts as "held by another sender": twice the
 * claim, because that sender's `now` may be ahead of ours (a cron tick's scheduled time trails the
 * reconnect's clock), and a claim it made then ends past our now + NOTICE_CLAIM_MS. A member's own
 * quiet hours or hourly cap holding a notice that briefly blocks the later ones changes nothing: the
 * later ones wait for the same reason.
 */
const CLAIM_SEEN_MS = 2 * NOTICE_CLAIM_MS;

/**
 * Takes the notice for this sender: false when another sender holds it, it is no longer due, or an
 * earlier notice to the same member is still due or held by another sender (the reconnect's pass, a
 * request's waitUntil and the cron can run at once, and a member must get their notices in the order
 * they were queued; one held for quiet hours or the hourly cap does not block). One statement, so the
 * check and the claim cannot be split by another sender.
 */
async function claim(db: Db, notice: LineNoticeRow, now: number): Promise<boolean> {
  const claimed = await db
    .update(lineNotices)
    .set({ notBefore: now + NOTICE_CLAIM_MS })
    .where(
      and(
        eq(lineNotices.id, notice.id),
        eq(lineNotices.status, "queued"),
        lte(lineNotices.notBefore, now),
        sql`NOT EXISTS (SELECT 1 FROM line_notices AS earlier
          WHERE earlier.company_id = ${notice.companyId} AND earlier.user_id = ${notice.userId}
            AND earlier.status = 'queued' AND earlier.not_before <= ${now + CLAIM_SEEN_MS}
            AND (earlier.created_at < ${notice.createdAt}
              OR (earlier.created_at = ${notice.createdAt} AND earlier.rowid < ${lineNotices}.rowid)))`,
      ),
    )
    .returning({ id: lineNotices.id });
  return claimed.length === 1;
}

const settle = (db: Db, id: string, fields: Partial<LineNoticeRow>) =>
  db.update(lineNotices).set(fields).where(eq(lineNotices.id, id));

/** When the member may get another notice, or null when they are under the hourly limit. */
async function rateLimitedUntil(db: Db, notice: LineNoticeRow, now: number): Promise<number | null> {
  const [row] = await db
    .select({ sent: count(), oldest: min(lineNotices.sentAt) })
    .from(lineNotices)
    .where(
      and(
        eq(lineNotices.companyId, notice.companyId),
        eq(lineNotices.userId, notice.userId),
        gt(lineNotices.sentAt, now - HOUR_MS),
      ),
    );
  if (!row || row.sent < NOTICES_PER_MEMBER_PER_HOUR) return null;
  return (row.oldest ?? now) + HOUR_MS;
}

/** A notice's message; its id is derived from the notice's, so sending it again is the same message. */
const contentOf = (notice: LineNoticeRow): LineContent => {
  const idempotencyKey = `line-notice-${notice.id}`;
  return notice.pollOptions
    ? { type: "poll", question: notice.text, options: notice.pollOptions, idempotencyKey }
    : { type: "text", text: notice.text, idempotencyKey };
};

async function sendOne(
  env: Env,
  db: Db,
  fetch: LineFetch,
  origin: string,
  notice: LineNoticeRow,
  now: number,
  lineAccess: () => Promise<LineOwnerAccess>,
): Promise<Outcome> {
  if (!(await claim(db, notice, now))) return "taken";
  const settled = await settledReason(db, notice, now);
  if (settled) {
    await settle(db, notice.id, { status: "dropped", error: settled });
    return "dropped";
  }
  const roles = ROLES_NOW[notice.kind];
  const [member] = await recipientsFor(
    db,
    notice.companyId,
    notice.kind,
    { userIds: [notice.userId], ...(roles ? { roles } : {}) },
    now,
  );
  if (!member) {
    const error = "the member no longer has a verified number on the line, or no longer receives this";
    await settle(db, notice.id, { status: "dropped", error });
    return "dropped";
  }
  const later = member.quietUntil ?? (await rateLimitedUntil(db, notice, now));
  if (later !== null) {
    await settle(db, notice.id, { notBefore: later });
    return "held";
  }
  const content = contentOf(notice);
  const result = await sendOnLine(
    env,
    fetch,
    origin,
    notice.companyId,
    member.phone,
    content,
    await lineAccess(),
  );
  if (result.ok) {
    await settle(db, notice.id, {
      status: "sent",
      waMessageId: result.messageId,
      sentAt: Date.now(),
      phone: member.phone,
      error: null,
    });
    return "sent";
  }
  if (isTemporary(result.status)) {
    await settle(db, notice.id, { notBefore: now, error: `HTTP ${result.status}: ${result.error}` });
    return "line_down";
  }
  await settle(db, notice.id, { status: "failed", error: `HTTP ${result.status}: ${result.error}` });
  return "failed";
}
