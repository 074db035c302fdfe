import type { ToolContext } from "./registry";
import { callRest, type RestAnswer } from "./rest";

export const issuePath = (issueId: string) => `/issues/${encodeURIComponent(issueId)}`;

/** `?a=1&b=2` of the defined values, or "" when there are none. */
export function queryString(values: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values))
    if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

export const restAs = (ctx: ToolContext, call: Parameters<typeof callRest>[3]) =>
  callRest(ctx.appFetch, ctx.origin, ctx.caller, call);

/** The company an agent key belongs to; a user key may reach several, so it has none by default. */
export const callerCompanyId = (ctx: ToolContext): string | undefined =>
  ctx.caller.actor.type === "agent" ? ctx.caller.actor.companyId : undefined;

export interface CommentPage {
  after?: string;
  limit: number;
}

/**
 * One issue as a model needs it: GET /issues/{id} (state, ancestors, project, goal, blockers) with a
 * page of its comments (GET …/comments, oldest first) under `comments`. When the page is full,
 * `nextCommentsAfter` is the cursor for the next one. Either refusal (404 for another company's
 * issue) is the answer as it is.
 */
export async function readIssueWithComments(
  ctx: ToolContext,
  issueId: string,
  page: CommentPage,
): Promise<RestAnswer> {
  const [issue, comments] = await Promise.all([
    restAs(ctx, { method: "GET", path: issuePath(issueId) }),
    restAs(ctx, { method: "GET", path: `${issuePath(issueId)}/comments${queryString({ ...page })}` }),
  ]);
  if (issue.status !== 200) return issue;
  if (comments.status !== 200) return comments;
  const list = comments.body as Array<{ id: string }>;
  const full = list.length === page.limit;
  return {
    status: 200,
    body: {
      ...(issue.body as Record<string, unknown>),
      comments: list,
      ...(full ? { nextCommentsAfter: list.at(-1)?.id } : {}),
    },
  };
}
