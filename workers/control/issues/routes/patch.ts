import { createRoute, type RouteConfig, type RouteConfigToTypedResponse } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { withCredentialGuard } from "../../../auth/middleware";
import { refOf } from "../../../core/actor";
import { issueAttachments } from "../../../db/schema";
import {
  controlAuth,
  controlError,
  controlErrors,
  createRouter,
  json,
  jsonBody,
} from "../../../http/openapi";
import { controlContext, requireBoard } from "../../shared";
import { locateVisibleIssue } from "../locator";
import { withIssueIds } from "../refs";
import { IssueParamSchema, UpdatedIssueSchema, UpdateIssueBodySchema } from "../schemas";
import { findVisibleIssue } from "../store";
import { mutateIssue } from "./call";

export const issuePatchRoutes = createRouter();

/** The IssueDO's answer as the route's typed response: the DO rendered it in the documented shape. */
export async function fromIssueDO<R extends RouteConfig>(
  _route: R,
  response: Promise<Response>,
): Promise<RouteConfigToTypedResponse<R>> {
  return (await response) as unknown as RouteConfigToTypedResponse<R>;
}

const patchRoute = createRoute({
  method: "patch",
  path: "/issues/{issueId}",
  tags: ["Issues"],
  summary: "Update an issue, optionally adding a comment in the same call",
  description:
    "Status moves follow the transition table: backlog→todo; in_progress→in_review|blocked|done; " +
    "in_review→done|in_progress; blocked→todo|in_progress; any non-terminal→cancelled. todo→in_progress " +
    "is checkout's (422 here). in_progress needs an assignee. started_at, completed_at and cancelled_at " +
    "are set on entering in_progress, done and cancelled. Entering blocked needs a comment in the same call, an " +
    "unresolved blocker (blockedByIssueIds), a pending linked approval or a pending question (422); done or cancelled wakes the assignees of " +
    "issues whose last unresolved blocker this was (issue_blockers_resolved). Cancelling: the board, the agent that created " +
    "the issue or a manager above it; a board-created issue also the CEO agent (else 403). The update " +
    "and the comment (with its @-mention wakes) commit together or not at all.",
  security: controlAuth,
  request: { params: IssueParamSchema, ...jsonBody(UpdateIssueBodySchema) },
  responses: {
    200: json(UpdatedIssueSchema, "Updated; `comment` when one was added"),
    ...controlErrors,
    422: controlError(
      "Invalid transition {details: {from, to, allowed}}, missing assignee, a bad reference, a blocker " +
        "cycle, or blocked without a reason",
    ),
  },
});

issuePatchRoutes.openapi(patchRoute, (c) => {
  const updated = withCredentialGuard(c, async (guard) => {
    const { actor, db } = controlContext(c);
    // Where the issue lives is all the route needs (the IssueDO reads the row fresh): no query once
    // this isolate has seen the issue (locator.ts).
    const issue = await locateVisibleIssue(db, actor, c.req.valid("param").issueId);
    const input = await withIssueIds(db, issue.companyId, c.req.valid("json"));
    return mutateIssue(c, issue, { kind: "update", actor: refOf(actor), input, ...(guard ? { guard } : {}) });
  });
  return fromIssueDO(patchRoute, updated);
});

const deleteRoute = createRoute({
  method: "delete",
  path: "/issues/{issueId}",
  tags: ["Issues"],
  summary: "Delete an issue (board only)",
  description:
    "Deletes the issue with its comments, documents, labels, approval links and blocker links. Its " +
    "sub-issues move up to its parent; issues it was the last unresolved blocker of wake their assignee " +
    "(issue_blockers_resolved); queued runs about it are cancelled (issue_deleted); an activity row " +
    "issue.deleted keeps its identifier and title; its attachments' files are removed. Agents get 403: they cancel (PATCH status cancelled).",
  security: controlAuth,
  request: { params: IssueParamSchema },
  responses: { 204: { description: "Deleted" }, ...controlErrors },
});

issuePatchRoutes.openapi(deleteRoute, async (c) => {
  const { actor, db } = controlContext(c);
  const issue = await findVisibleIssue(db, actor, c.req.valid("param").issueId);
  requireBoard(actor, "delete issues; agents cancel them (PATCH status cancelled)");
  const stored = await db
    .select({ key: issueAttachments.r2Key })
    .from(issueAttachments)
    .where(eq(issueAttachments.issueId, issue.id));
  await mutateIssue(c, issue, { kind: "delete", actor: refOf(actor) });
  // The rows went with the issue (cascade); the bytes are R2's to forget.
  if (stored.length > 0) await c.env.ASSETS.delete(stored.map((row) => row.key));
  return c.body(null, 204);
});
