import { createRoute, z } from "@hono/zod-openapi";
import { and, asc, eq, sql } from "drizzle-orm";
import { withCredentialGuard } from "../../../auth/middleware";
import { refOf } from "../../../core/actor";
import type { Db } from "../../../db/client";
import { issueComments } from "../../../db/schema";
import { notFound } from "../../../http/errors";
import { controlAuth, controlErrors, createRouter, json, jsonBody } from "../../../http/openapi";
import {
  actorNames,
  cappedTotal,
  controlContext,
  nameOf,
  pageHeaders,
  pageOf,
  setPageHeaders,
} from "../../shared";
import { commentResource, namedComments } from "../comment-resource";
import { locateVisibleIssue } from "../locator";
import {
  CommentParamSchema,
  CommentSchema,
  CreateCommentBodySchema,
  IssueParamSchema,
  ListCommentsQuerySchema,
} from "../schemas";
import { findVisibleIssue } from "../store";
import { mutateIssue } from "./call";
import { fromIssueDO } from "./patch";

export const issueCommentRoutes = createRouter();
const tags = ["Issues"];
const COMMENT_NOT_FOUND = "Comment not found";

const rowid = sql`${issueComments}.rowid`;

const commentQuery = (db: Db, issueId: string, commentId: string) =>
  db
    .select()
    .from(issueComments)
    .where(and(eq(issueComments.id, commentId), eq(issueComments.issueId, issueId)));

/**
 * Oldest first; `after` is a comment of this issue (else 404), and the page starts past it in
 * (createdAt, insertion) order, which `(issue_id, created_at)` serves from the index.
 */
async function listComments(db: Db, issueId: string, query: z.infer<typeof ListCommentsQuerySchema>) {
  const page = (after?: { createdAt: number; rowid: number }) =>
    db
      .select()
      .from(issueComments)
      .where(
        and(
          eq(issueComments.issueId, issueId),
          after
            ? sql`(${issueComments.createdAt}, ${rowid}) > (${after.createdAt}, ${after.rowid})`
            : undefined,
        ),
      )
      .orderBy(asc(issueComments.createdAt), asc(rowid))
      .limit(query.limit + 1);
  if (query.after === undefined) return page();
  const cursor = await db
    .select({ createdAt: issueComments.createdAt, rowid: sql<number>`${rowid}` })
    .from(issueComments)
    .where(and(eq(issueComments.id, query.after), eq(issueComments.issueId, issueId)))
    .get();
  if (!cursor) throw notFound(COMMENT_NOT_FOUND, "after: no such comment on this issue");
  return page(cursor);
}

issueCommentRoutes.openapi(
  createRoute({
    method: "get",
    path: "/issues/{issueId}/comments",
    tags,
    summary: "The issue's comments, oldest first",
    description:
      "`after` (a comment id, e.g. a heartbeat context's commentCursor) returns only later comments; " +
      "limit defaults to 100 (max 500). X-Total-Count says how many the issue has, X-Next-Cursor (while " +
      "more follow) is the `after` of the next page.",
    security: controlAuth,
    request: { params: IssueParamSchema, query: ListCommentsQuerySchema },
    responses: {
      200: { ...json(z.array(CommentSchema), "Comments"), headers: pageHeaders("comments", "after") },
      ...controlErrors,
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const issue = await findVisibleIssue(db, actor, c.req.valid("param").issueId);
    const query = c.req.valid("query");
    const [rows, total] = await Promise.all([
      listComments(db, issue.id, query),
      cappedTotal(db, issueComments, eq(issueComments.issueId, issue.id)),
    ]);
    const page = pageOf(rows, query.limit, (last) => last.id);
    setPageHeaders(c, total, page.nextCursor);
    return c.json(await namedComments(db, issue.companyId, page.rows), 200);
  },
);

issueCommentRoutes.openapi(
  createRoute({
    method: "get",
    path: "/issues/{issueId}/comments/{commentId}",
    tags,
    summary: "One comment",
    security: controlAuth,
    request: { params: CommentParamSchema },
    responses: { 200: json(CommentSchema, "The comment"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { issueId, commentId } = c.req.valid("param");
    const issue = await findVisibleIssue(db, actor, issueId);
    const row = await commentQuery(db, issue.id, commentId).get();
    if (!row) throw notFound(COMMENT_NOT_FOUND);
    const names = await actorNames(db, issue.companyId, {
      userIds: [row.authorUserId],
      agentIds: [row.authorAgentId],
    });
    return c.json(commentResource(row, nameOf(names, row.authorUserId, row.authorAgentId)), 200);
  },
);

const postRoute = createRoute({
  method: "post",
  path: "/issues/{issueId}/comments",
  tags,
  summary: "Comment on an issue; wakes the assignee and @-mentioned agents, notifies @-mentioned people",
  description:
    "`@Name` (an agent of the company, case-insensitive, the longest name wins) or " +
    "`[@Name](agent://<agentId>)` wakes that agent once per comment (never the author), as a heartbeat " +
    "run with reason issue_comment_mentioned; a wake of a paused, pending, terminated or over-budget " +
    "agent is recorded as cancelled. Mentions inside code are ignored. The issue's assignee agent is " +
    "woken with reason issue_commented (not for its own comment, not on done or cancelled issues, " +
    "once if also mentioned). `@Name` of a member of the company (their display name, same rules) " +
    "notifies that person: a `mention` in their inbox (`GET /api/notifications`), live on their open " +
    "pages, and on the company's WhatsApp line when they chose `mentions` there. Bumps the issue's updatedAt.",
  security: controlAuth,
  request: { params: IssueParamSchema, ...jsonBody(CreateCommentBodySchema) },
  responses: { 201: json(CommentSchema, "Created"), ...controlErrors },
});

issueCommentRoutes.openapi(postRoute, (c) => {
  const commented = withCredentialGuard(c, async (guard) => {
    const { actor, db } = controlContext(c);
    // Where the issue lives is all the route needs (the IssueDO reads the row fresh): no query once
    // this isolate has seen the issue (locator.ts).
    const issue = await locateVisibleIssue(db, actor, c.req.valid("param").issueId);
    const input = c.req.valid("json");
    return mutateIssue(c, issue, {
      kind: "comment",
      actor: refOf(actor),
      input,
      ...(guard ? { guard } : {}),
    });
  });
  return fromIssueDO(postRoute, commented);
});
