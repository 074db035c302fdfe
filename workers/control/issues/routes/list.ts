import { createRoute, z } from "@hono/zod-openapi";
import { and, asc, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { ISSUE_STATUSES, type IssueStatus, issueLabels, issues } from "../../../db/schema";
import { badRequest } from "../../../http/errors";
import { controlAuth, controlErrors, createRouter, json } from "../../../http/openapi";
import { companyForActor, controlContext } from "../../shared";
import { issueResource } from "../resource";
import { CompanyIssuesParamSchema, IssueSchema, ListIssuesQuerySchema } from "../schemas";

export const issueListRoutes = createRouter();

type ListQuery = z.infer<typeof ListIssuesQuerySchema>;

/** `todo,in_progress` → the statuses; an unknown one is a 400 (a typo must not silently match nothing). */
export function parseStatuses(raw: string | undefined): IssueStatus[] | undefined {
  if (raw === undefined) return undefined;
  const values = [...new Set(raw.split(",").map((value) => value.trim()))].filter((value) => value !== "");
  const unknown = values.filter((value) => !(ISSUE_STATUSES as readonly string[]).includes(value));
  if (unknown.length > 0)
    throw badRequest(`status: unknown status ${unknown.join(", ")} (one of ${ISSUE_STATUSES.join(", ")})`);
  return values.length > 0 ? (values as IssueStatus[]) : undefined;
}

/**
 * FTS5 match expressions for `q`, one per whitespace-separated term: each term quoted as a phrase
 * (double quotes doubled) with a trailing `*`, so user text is never FTS syntax and matches by
 * prefix. Terms without a letter or digit tokenise to nothing and are dropped.
 */
export function searchTerms(q: string | undefined): string[] {
  if (!q) return [];
  return q
    .split(/\s+/)
    .filter((term) => /[\p{L}\p{N}]/u.test(term))
    .slice(0, 16)
    .map((term) => `"${term.replaceAll('"', '""')}"*`);
}

/**
 * Each term is its own `IN (… MATCH …)`, so all terms must match the issue, but not necessarily in
 * the same document (title in one, a word of a comment in another). Scoped by company inside.
 */
function searchCondition(companyId: string, match: string): SQL {
  return sql`${issues.id} IN (SELECT issue_id FROM issue_search WHERE issue_search MATCH ${match} AND company_id = ${companyId})`;
}

function listConditions(companyId: string, query: ListQuery): SQL[] {
  const conditions: SQL[] = [eq(issues.companyId, companyId)];
  const statuses = parseStatuses(query.status);
  if (statuses) conditions.push(inArray(issues.status, statuses));
  if (query.assigneeAgentId) conditions.push(eq(issues.assigneeAgentId, query.assigneeAgentId));
  if (query.assigneeUserId) conditions.push(eq(issues.assigneeUserId, query.assigneeUserId));
  if (query.projectId) conditions.push(eq(issues.projectId, query.projectId));
  if (query.parentId) conditions.push(eq(issues.parentId, query.parentId));
  if (query.labelId)
    conditions.push(
      sql`${issues.id} IN (SELECT ${issueLabels.issueId} FROM ${issueLabels} WHERE ${issueLabels.labelId} = ${query.labelId})`,
    );
  for (const match of searchTerms(query.q)) conditions.push(searchCondition(companyId, match));
  return conditions;
}

/**
 * The page in the documented order: priority (critical first), then oldest first, then insertion
 * order for ties. `(company_id, priority_rank, created_at)` is an index and rowid its implicit last
 * column, so the order costs no sort.
 */
export function listIssues(db: Db, companyId: string, query: ListQuery) {
  return db
    .select()
    .from(issues)
    .where(and(...listConditions(companyId, query)))
    .orderBy(asc(issues.priorityRank), asc(issues.createdAt), asc(sql`${issues}.rowid`))
    .limit(query.limit)
    .offset(query.offset);
}

issueListRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/issues",
    tags: ["Issues"],
    summary: "List the company's issues",
    description:
      "Sorted by priority (critical, high, medium, low), then by creation time (oldest first). Filters " +
      "combine with AND: status (comma-separated), assigneeAgentId, assigneeUserId, projectId, labelId, " +
      "parentId, and q, a prefix full-text search over title, identifier, description and comments " +
      "(every whitespace-separated term must match). limit defaults to 100 (max 500); offset pages.",
    security: controlAuth,
    request: { params: CompanyIssuesParamSchema, query: ListIssuesQuerySchema },
    responses: { 200: json(z.array(IssueSchema), "Issues"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const rows = await listIssues(db, company.id, c.req.valid("query"));
    return c.json(rows.map(issueResource), 200);
  },
);
