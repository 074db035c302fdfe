import { createRoute, z } from "@hono/zod-openapi";
import { and, asc, count, eq, lt } from "drizzle-orm";
import type { Db } from "../../db/client";
import { iso } from "../../db/client";
import {
  AGENT_STATUSES,
  type AgentStatus,
  agents,
  approvals,
  type CompanyRow,
  ISSUE_STATUSES,
  type IssueStatus,
  issues,
} from "../../db/schema";
import { controlAuth, controlErrors, createRouter, json } from "../../http/openapi";
import {
  activityPage,
  companyForActor,
  controlContext,
  namedActivity,
  pageHeaders,
  setPageHeaders,
} from "../shared";
import { ActivityQuerySchema, ActivitySchema, CompanyParamSchema, DashboardSchema } from "./schemas";

/** Read-only views of a company: the health dashboard and the activity log. */
export const companyDashboardRoutes = createRouter();
const tags = ["Companies"];

/** An in_progress issue nobody has touched for this long is reported as stale. */
export const STALE_AFTER_MS = 24 * 60 * 60 * 1000;
const STALE_LIST_LIMIT = 50;
const CLOSED_STATUSES: readonly IssueStatus[] = ["done", "cancelled"];

/** Every status present with 0 when absent, so clients read a stable shape. */
function tally<S extends string>(statuses: readonly S[], rows: Array<{ status: S; n: number }>) {
  const byStatus = Object.fromEntries(statuses.map((status) => [status, 0])) as Record<S, number>;
  for (const row of rows) byStatus[row.status] = row.n;
  return { byStatus, total: rows.reduce((sum, row) => sum + row.n, 0) };
}

export const utilizationPercent = (spent: number, budget: number): number =>
  budget > 0 ? Number(((spent / budget) * 100).toFixed(2)) : 0;

async function dashboardOf(db: Db, company: CompanyRow, now: number) {
  const [agentRows, issueRows, stale, pending] = await Promise.all([
    db
      .select({ status: agents.status, n: count() })
      .from(agents)
      .where(eq(agents.companyId, company.id))
      .groupBy(agents.status),
    db
      .select({ status: issues.status, n: count() })
      .from(issues)
      .where(eq(issues.companyId, company.id))
      .groupBy(issues.status),
    db
      .select({
        id: issues.id,
        identifier: issues.identifier,
        title: issues.title,
        assigneeAgentId: issues.assigneeAgentId,
        updatedAt: issues.updatedAt,
      })
      .from(issues)
      .where(
        and(
          eq(issues.companyId, company.id),
          eq(issues.status, "in_progress"),
          lt(issues.updatedAt, now - STALE_AFTER_MS),
        ),
      )
      .orderBy(asc(issues.updatedAt))
      .limit(STALE_LIST_LIMIT),
    db
      .select({ n: count() })
      .from(approvals)
      .where(and(eq(approvals.companyId, company.id), eq(approvals.status, "pending")))
      .get(),
  ]);
  const agentCounts = tally<AgentStatus>(AGENT_STATUSES, agentRows);
  const issueCounts = tally<IssueStatus>(ISSUE_STATUSES, issueRows);
  const closed = CLOSED_STATUSES.reduce((sum, status) => sum + issueCounts.byStatus[status], 0);
  return {
    companyId: company.id,
    agents: agentCounts,
    issues: { ...issueCounts, open: issueCounts.total - closed },
    spend: {
      spentMonthlyCents: company.spentMonthlyCents,
      budgetMonthlyCents: company.budgetMonthlyCents,
      utilizationPercent: utilizationPercent(company.spentMonthlyCents, company.budgetMonthlyCents),
    },
    staleTasks: stale.map((row) => ({ ...row, updatedAt: iso(row.updatedAt) })),
    pendingApprovals: pending?.n ?? 0,
  };
}

companyDashboardRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/dashboard",
    tags,
    summary: "Health summary: agents and issues by status, spend, stale tasks, pending approvals",
    description: `Stale tasks are in_progress issues not updated for 24 hours (oldest first, at most ${STALE_LIST_LIMIT}).`,
    security: controlAuth,
    request: { params: CompanyParamSchema },
    responses: { 200: json(DashboardSchema, "The summary"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    return c.json(await dashboardOf(db, company, Date.now()), 200);
  },
);

companyDashboardRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/activity",
    tags,
    summary: "The company's activity log, newest first",
    description:
      "Filters: agentId (actions taken by that agent), actorType, action (a trailing dot: every action of " +
      "that entity type), entityType, entityId, since and until (dates or date-times); limit 1..200, " +
      "default 50. Paging: before=<the last entry's id> continues with older entries; X-Next-Cursor (while " +
      "more follow) is that id, X-Total-Count how many entries match the filters.",
    security: controlAuth,
    request: { params: CompanyParamSchema, query: ActivityQuerySchema },
    responses: {
      200: {
        ...json(z.array(ActivitySchema), "Activity entries"),
        headers: pageHeaders("entries", "before"),
      },
      ...controlErrors,
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const page = await activityPage(db, company.id, c.req.valid("query"));
    setPageHeaders(c, page.total, page.nextCursor);
    return c.json(await namedActivity(db, company.id, page.rows), 200);
  },
);
