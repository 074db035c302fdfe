import { createRoute, z } from "@hono/zod-openapi";
import { and, eq, type SQL, sql } from "drizzle-orm";
import type { Actor } from "../../../core/actor";
import type { Db } from "../../../db/client";
import { companyMemberships, type IssueStatus } from "../../../db/schema";
import { badRequest, forbidden, notFound } from "../../../http/errors";
import { controlAuth, controlErrors, createRouter, json } from "../../../http/openapi";
import { activityInsert, controlContext, requireBoard } from "../../shared";
import { readMarkUpsert } from "../read-state";
import {
  InboxEntrySchema,
  InboxQuerySchema,
  IssueParamSchema,
  MineUnreadCountSchema,
  ReadStateSchema,
} from "../schemas";
import { findVisibleIssue } from "../store";

export const issueInboxRoutes = createRouter();
const tags = ["Issues"];

/** Finished issues (done, cancelled) leave the Mine tab this long after they finished. */
const FINISHED_VISIBLE_MS = 7 * 24 * 60 * 60 * 1000;

interface InboxRow {
  id: string;
  identifier: string;
  title: string;
  status: IssueStatus;
  created_by_me: number;
  created_at: number;
  my_comment_at: number | null;
  read_at: number | null;
  external_comment_at: number | null;
  assigned_at: number | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * Whose Mine tab, and over which companies: a board user reads their own (userId optional, another
 * user's is 403) across their companies; an agent reads a member of its own company (userId
 * required; a non-member is 404, like any id outside the caller's company).
 */
async function inboxScope(
  db: Db,
  actor: Actor,
  userId: string | undefined,
): Promise<{ userId: string; scope: SQL }> {
  if (actor.type === "board") {
    if (userId !== undefined && userId !== actor.userId)
      throw forbidden("A board user can read only their own Mine inbox");
    return {
      userId: actor.userId,
      scope: sql`i.company_id IN (SELECT company_id FROM company_memberships WHERE user_id = ${actor.userId})`,
    };
  }
  if (userId === undefined) throw badRequest("userId: required when an agent reads a user's Mine inbox");
  const member = await db
    .select({ userId: companyMemberships.userId })
    .from(companyMemberships)
    .where(and(eq(companyMemberships.companyId, actor.companyId), eq(companyMemberships.userId, userId)))
    .get();
  if (!member) throw notFound("User not found");
  return { userId, scope: sql`i.company_id = ${actor.companyId}` };
}

/**
 * The user's issues (created, assigned, or commented on) with their touch and comment times, in one
 * query, most recently active first (a comment bumps the issue's updatedAt).
 */
function inboxRows(db: Db, userId: string, scope: SQL, limit: number, now: number) {
  return db.all<InboxRow>(inboxQuery(userId, scope, limit, now));
}

function inboxQuery(userId: string, scope: SQL, limit: number, now: number): SQL {
  const finishedBefore = now - FINISHED_VISIBLE_MS;
  return sql`
    SELECT i.id, i.identifier, i.title, i.status, i.created_at,
      (i.created_by_user_id IS NOT NULL AND i.created_by_user_id = ${userId}) AS created_by_me,
      (SELECT max(c.created_at) FROM issue_comments c WHERE c.issue_id = i.id AND c.author_user_id = ${userId}) AS my_comment_at,
      (SELECT r.last_read_at FROM issue_read_states r WHERE r.issue_id = i.id AND r.user_id = ${userId}) AS read_at,
      (SELECT max(c.created_at) FROM issue_comments c WHERE c.issue_id = i.id
         AND (c.author_user_id IS NULL OR c.author_user_id <> ${userId})) AS external_comment_at,
      (SELECT max(n.created_at) FROM notifications n WHERE n.issue_id = i.id AND n.user_id = ${userId}
         AND n.kind = 'assigned') AS assigned_at
    FROM issues i
    WHERE ${scope}
      AND (i.created_by_user_id = ${userId} OR i.assignee_user_id = ${userId}
        OR i.id IN (SELECT issue_id FROM issue_comments WHERE author_user_id = ${userId}))
      AND NOT (i.status IN ('done', 'cancelled')
        AND coalesce(i.completed_at, i.cancelled_at, i.updated_at) < ${finishedBefore})
    ORDER BY i.updated_at DESC, i.rowid DESC
    LIMIT ${limit}`;
}

/**
 * How many of the user's `limit` most recently active entries are unread, counted in SQL (the header
 * asks on every page): `inboxEntry`'s rule with -1 for "never", so news after the last touch.
 */
async function unreadInboxCount(db: Db, userId: string, scope: SQL, limit: number, now: number) {
  const row = await db.get<{ n: number }>(sql`
    SELECT count(*) AS n FROM (${inboxQuery(userId, scope, limit, now)})
    WHERE max(coalesce(external_comment_at, -1), coalesce(assigned_at, -1))
      > max(CASE WHEN created_by_me THEN created_at ELSE -1 END, coalesce(my_comment_at, -1), coalesce(read_at, -1))`);
  return row?.n ?? 0;
}

function inboxEntry(row: InboxRow) {
  const touches = [row.created_by_me ? row.created_at : null, row.my_comment_at, row.read_at].filter(
    (ms): ms is number => ms !== null,
  );
  const myLastTouchAt = touches.length > 0 ? Math.max(...touches) : null;
  // Assignments are notified only when someone else made them (people/notify.ts), so either is news.
  const news = Math.max(row.external_comment_at ?? -1, row.assigned_at ?? -1);
  return {
    id: row.id,
    identifier: row.identifier,
    title: row.title,
    status: row.status,
    myLastTouchAt: iso(myLastTouchAt),
    lastExternalCommentAt: iso(row.external_comment_at),
    assignedToMeAt: iso(row.assigned_at),
    isUnreadForMe: news >= 0 && (myLastTouchAt === null || news > myLastTouchAt),
  };
}

issueInboxRoutes.openapi(
  createRoute({
    method: "get",
    path: "/agents/me/inbox/mine",
    tags,
    summary: "A board user's Mine inbox: issues they created, are assigned to, or commented on",
    description:
      "Board callers read their own (userId optional; another user's is 403) across their companies. " +
      "Agents pass the userId of a member of their company (400 without it, 404 for a non-member). " +
      "myLastTouchAt is the latest of creating, commenting and reading (POST /issues/{id}/read); " +
      "isUnreadForMe when someone else commented since. Most recently active first; done and " +
      "cancelled issues drop out 7 days after they finished.",
    security: controlAuth,
    request: { query: InboxQuerySchema },
    responses: { 200: json(z.array(InboxEntrySchema), "Entries"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const query = c.req.valid("query");
    const { userId, scope } = await inboxScope(db, actor, query.userId);
    const rows = await inboxRows(db, userId, scope, query.limit, Date.now());
    return c.json(rows.map(inboxEntry), 200);
  },
);

/** Mine entries counted at most: the header shows "N unread", and a number past this says enough. */
const UNREAD_COUNT_SCAN = 500;

issueInboxRoutes.openapi(
  createRoute({
    method: "get",
    path: "/agents/me/inbox/mine/unread-count",
    tags,
    summary: "How many of the user's Mine issues are unread (the dashboard's Mine count)",
    description:
      "The number of entries of `GET /agents/me/inbox/mine` with isUnreadForMe, over the user's 500 most " +
      "recently active issues; same callers and userId rules.",
    security: controlAuth,
    request: { query: InboxQuerySchema.pick({ userId: true }) },
    responses: { 200: json(MineUnreadCountSchema, "Unread count"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { userId, scope } = await inboxScope(db, actor, c.req.valid("query").userId);
    return c.json(
      { unreadCount: await unreadInboxCount(db, userId, scope, UNREAD_COUNT_SCAN, Date.now()) },
      200,
    );
  },
);

issueInboxRoutes.openapi(
  createRoute({
    method: "post",
    path: "/issues/{issueId}/read",
    tags,
    summary: "Mark the issue read for the calling board user (Mine inbox)",
    security: controlAuth,
    request: { params: IssueParamSchema },
    responses: { 200: json(ReadStateSchema, "Read state"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const issue = await findVisibleIssue(db, actor, c.req.valid("param").issueId);
    requireBoard(actor, "mark issues read");
    const now = Date.now();
    const mark = { issueId: issue.id, userId: actor.userId, companyId: issue.companyId };
    await db.batch([
      readMarkUpsert(db, mark, now),
      activityInsert(
        db,
        {
          companyId: issue.companyId,
          actor: { type: "board", userId: actor.userId },
          action: "issue.read_marked",
          entityType: "issue",
          entityId: issue.id,
        },
        now,
      ),
    ]);
    return c.json({ issueId: issue.id, userId: actor.userId, lastReadAt: new Date(now).toISOString() }, 200);
  },
);
