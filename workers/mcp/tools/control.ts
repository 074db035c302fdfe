import { z } from "@hono/zod-openapi";
import {
  CheckoutBodySchema,
  CreateCommentBodySchema,
  IssueParamSchema,
  ListCommentsQuerySchema,
  UpdateIssueBodySchema,
} from "../../control/issues";
import { issuePath, readIssueWithComments } from "./issue-read";
import { type AnyToolDefinition, defineBareTool, defineTool, type ToolContext } from "./registry";
import { callRest, type RestAnswer, type RestCall, toolResultOf } from "./rest";

// The tools' inputs are the REST routes' own schemas (path parameters merged with the body), so a
// change to a route's schema changes its tool; strict, so a misspelt field is refused, not dropped.
const CheckoutToolInput = z.strictObject({
  ...IssueParamSchema.shape,
  ...CheckoutBodySchema.shape,
  agentId: CheckoutBodySchema.shape.agentId
    .optional()
    .describe("The agent to check out as; defaults to the calling agent (agent keys)"),
});
const UpdateToolInput = z.strictObject({ ...IssueParamSchema.shape, ...UpdateIssueBodySchema.shape });
const GetIssueToolInput = z.strictObject({
  ...IssueParamSchema.shape,
  after: ListCommentsQuerySchema.shape.after.describe(
    "Only comments after this comment id (e.g. the last one you already read, or nextCommentsAfter)",
  ),
  limit: ListCommentsQuerySchema.shape.limit.describe("At most this many comments (default 100, max 500)"),
});
const CommentToolInput = z.strictObject({ ...IssueParamSchema.shape, ...CreateCommentBodySchema.shape });

/** A 409 on checkout, said so a model stops: who holds the issue, and what to do instead. */
function explainCheckoutConflict(answer: RestAnswer): string | undefined {
  if (answer.status !== 409) return undefined;
  const details = (
    answer.body as { details?: { status?: string; holder?: { id: string; name: string | null } } }
  )?.details;
  const holder = details?.holder;
  const who = holder ? `${holder.name ?? "an agent"} (agent ${holder.id})` : "nobody";
  return (
    `Not checked out: the issue is ${details?.status ?? "not available"} and held by ${who}. ` +
    "Do not retry; pick another issue."
  );
}

export function run(ctx: ToolContext, call: RestCall, explain?: (answer: RestAnswer) => string | undefined) {
  return callRest(ctx.appFetch, ctx.origin, ctx.caller, call).then((answer) => toolResultOf(answer, explain));
}

/** The control-plane tools; each is one REST call made as the caller. */
export const controlTools: AnyToolDefinition[] = [
  defineBareTool({
    name: "me",
    domain: "control",
    scope: "read",
    description:
      "Who you are and your chain of command: your agent record (id, companyId, role, status, monthly " +
      "budget and spend) and chainOfCommand, your managers nearest first up to the CEO (ask them, or " +
      "hand_off to them, when you are stuck). Call it first in a heartbeat. Agent keys only.",
    annotations: { readOnlyHint: true },
    run: (ctx) => run(ctx, { method: "GET", path: "/agents/me" }),
  }),
  defineTool({
    name: "get_issue",
    domain: "control",
    scope: "read",
    description:
      "Read one issue by id or identifier (ACM-12) with what you need to work on it: status, priority, " +
      "assignee, description, ancestors (parent first, up to the root: why the work exists, each with its " +
      "project and goal), blockers, and its comments oldest first under `comments`. When " +
      "nextCommentsAfter is present there are more: call again with after set to it.",
    inputSchema: GetIssueToolInput,
    annotations: { readOnlyHint: true },
    run: (ctx, { issueId, after, limit }) =>
      readIssueWithComments(ctx, issueId, { after, limit }).then((answer) => toolResultOf(answer)),
  }),
  defineTool({
    name: "checkout_issue",
    domain: "control",
    scope: "control",
    description:
      "Claim an issue and start work on it, atomically: todo → in_progress with you as its only assignee. " +
      'expectedStatuses is what you believe its status is (usually ["todo"]). If another agent holds it you ' +
      "get an error naming the holder: do not retry, pick another issue.",
    inputSchema: CheckoutToolInput,
    run: (ctx, { issueId, agentId, expectedStatuses }) => {
      const claimant = agentId ?? (ctx.caller.actor.type === "agent" ? ctx.caller.actor.agentId : undefined);
      return run(
        ctx,
        {
          method: "POST",
          path: `${issuePath(issueId)}/checkout`,
          body: { agentId: claimant, expectedStatuses },
        },
        explainCheckoutConflict,
      );
    },
  }),
  defineTool({
    name: "update_issue",
    domain: "control",
    scope: "control",
    description:
      "Change an issue: status (in_progress → in_review | blocked | done; blocked needs a comment), priority, " +
      "assignee, title, description, blockers, with an optional comment committed together with the change.",
    inputSchema: UpdateToolInput,
    run: (ctx, { issueId, ...fields }) =>
      run(ctx, { method: "PATCH", path: issuePath(issueId), body: fields }),
  }),
  defineTool({
    name: "add_comment",
    domain: "control",
    scope: "control",
    description: "Comment on an issue (markdown). @-mention an agent by name to wake it.",
    inputSchema: CommentToolInput,
    run: (ctx, { issueId, body }) =>
      run(ctx, { method: "POST", path: `${issuePath(issueId)}/comments`, body: { body } }),
  }),
];
