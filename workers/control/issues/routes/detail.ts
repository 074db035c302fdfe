import { createRoute } from "@hono/zod-openapi";
import { desc, eq, sql } from "drizzle-orm";
import type { AgentRow, IssueRow } from "../../../db/schema";
import { agents, issueComments, issues } from "../../../db/schema";
import { notFound } from "../../../http/errors";
import { controlAuth, controlErrors, createRouter, json } from "../../../http/openapi";
import { actorNames, controlContext, issueKeyCondition, nameOf } from "../../shared";
import { locateVisibleIssue } from "../locator";
import { issueObject } from "../object";
import { HeartbeatContextSchema, IssueDetailSchema, IssueParamSchema } from "../schemas";
import { ancestorsOf, chainIssueOf, chainQuery, goalOf, projectOf } from "../store";
import { renderedJson } from "./call";

export const issueDetailRoutes = createRouter();
const tags = ["Issues"];

/** Comments the heartbeat context carries; older ones are paged with GET …/comments?after=. */
const CONTEXT_COMMENTS = 20;
/** Above this share of its monthly budget, an agent is told to prioritise (spec: Limits). */
const PRIORITISE_ABOVE_PERCENT = 80;

/**
 * The detail: issue, labels, project, goal and ancestors, read with one query (see chainQuery) by the
 * issue's IssueDO, which keeps it in memory between mutations (see DETAIL_TTL_MS for what may lag).
 */
issueDetailRoutes.openapi(
  createRoute({
    method: "get",
    path: "/issues/{issueId}",
    tags,
    summary: "One issue with its project, goal, labels and ancestors",
    description:
      "By id or identifier (`ACM-12`, case-insensitive). ancestors walks parentId up to the root, " +
      "nearest first (at most 50), each with its own project and goal.",
    security: controlAuth,
    request: { params: IssueParamSchema },
    responses: { 200: json(IssueDetailSchema, "The issue"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const location = await locateVisibleIssue(db, actor, c.req.valid("param").issueId);
    const json = await issueObject(c.env, location).detail(location);
    if (json === null) throw notFound("Issue not found");
    return renderedJson(c, json);
  },
);

/** Spend against budget, and what to make of it, for an agent reading its task. */
function budgetHint(agent: AgentRow) {
  const { spentMonthlyCents, budgetMonthlyCents } = agent;
  const utilizationPercent =
    budgetMonthlyCents > 0 ? Math.round((spentMonthlyCents / budgetMonthlyCents) * 10_000) / 100 : null;
  const guidance: "normal" | "prioritise" =
    utilizationPercent !== null && utilizationPercent > PRIORITISE_ABOVE_PERCENT ? "prioritise" : "normal";
  return { spentMonthlyCents, budgetMonthlyCents, utilizationPercent, guidance };
}

const compactIssue = (issue: IssueRow) => ({
  id: issue.id,
  identifier: issue.identifier,
  title: issue.title,
  description: issue.description,
  status: issue.status,
  priority: issue.priority,
  assigneeAgentId: issue.assigneeAgentId,
  parentId: issue.parentId,
  projectId: issue.projectId,
  goalId: issue.goalId,
});

issueDetailRoutes.openapi(
  createRoute({
    method: "get",
    path: "/issues/{issueId}/heartbeat-context",
    tags,
    summary: "Compact context for an agent's heartbeat",
    description:
      "The issue's state, ancestor summaries, its project and goal, the comment count and the last 20 " +
      "comments (oldest first), and commentCursor (the latest comment's id). For an agent caller, a " +
      "budget hint: guidance is `prioritise` above 80% of the monthly budget.",
    security: controlAuth,
    request: { params: IssueParamSchema },
    responses: { 200: json(HeartbeatContextSchema, "Context"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const key = c.req.valid("param").issueId;
    // The comments are read alongside; they are used only if the chain shows the issue is visible.
    const [chain, latest, callerAgent] = await Promise.all([
      chainQuery(db, actor, key),
      db
        .select({
          id: issueComments.id,
          body: issueComments.body,
          authorAgentId: issueComments.authorAgentId,
          authorUserId: issueComments.authorUserId,
          createdAt: issueComments.createdAt,
        })
        .from(issueComments)
        .where(
          sql`${issueComments.issueId} = (SELECT ${issues.id} FROM ${issues} WHERE ${issueKeyCondition(key)})`,
        )
        .orderBy(desc(issueComments.createdAt), desc(sql`${issueComments}.rowid`))
        .limit(CONTEXT_COMMENTS),
      actor.type === "agent" ? db.select().from(agents).where(eq(agents.id, actor.agentId)).get() : undefined,
    ]);
    const { issue, self } = chainIssueOf(chain);
    const project = projectOf(self);
    const goal = goalOf(self);
    const names = await actorNames(db, issue.companyId, {
      userIds: latest.map((row) => row.authorUserId),
      agentIds: latest.map((row) => row.authorAgentId),
    });
    const comments = latest.reverse().map((row) => ({
      ...row,
      authorName: nameOf(names, row.authorUserId, row.authorAgentId),
      createdAt: new Date(row.createdAt).toISOString(),
    }));
    return c.json(
      {
        issue: compactIssue(issue),
        ancestors: ancestorsOf(chain, issue).map(({ id, identifier, title, status }) => ({
          id,
          identifier,
          title,
          status,
        })),
        project: project && { id: project.id, name: project.name, description: project.description },
        goal: goal && { id: goal.id, title: goal.title, description: goal.description },
        comments: { total: self.comment_count ?? 0, latest: comments },
        commentCursor: comments.at(-1)?.id ?? null,
        ...(callerAgent ? { budget: budgetHint(callerAgent) } : {}),
      },
      200,
    );
  },
);
