import { createRoute, z } from "@hono/zod-openapi";
import { and, asc, eq, getTableColumns, gte, inArray, lte, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { ISSUE_STATUSES, type IssueRow, type IssueStatus, issueLabels, issues } from "../../../db/schema";
import { badRequest } from "../../../http/errors";
import { controlAuth, controlErrors, createRouter, json } from "../../../http/openapi";
import {
  cappedTotal,
  companyForActor,
  controlContext,
  issueIdIn,
  pageHeaders,
  pageOf,
  setPageHeaders,
} from "../../shared";
import { issueResource } from "../resource";
import { CompanyIssuesParamSchema, IssueListItemSchema, ListIssuesQuerySchema } from "../schemas";

export const issueListRoutes = createRouter();

export type ListQuery = z.infer<typeof ListIssuesQuerySchema>;

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

/**
 * The company's condition, as an index may use it unless a narrower filter is there: SQLite has no
 * statistics on D1, and would rather walk the company's whole priority index (no sort needed) than
 * look up one assignee's issues and sort them. At 100,000 issues that walk is the slow list; the unary
 * `+` keeps the company condition out of index choice, so the filter's own index leads
 * (test/workers/control/issues/list-plans.test.ts).
 */
function companyCondition(companyId: string, query: ListQuery): SQL {
  return hasNarrowerFilter(query)
    ? sql`+${issues.companyId} = ${companyId}`
    : eq(issues.companyId, companyId);
}

/** A filter whose own index finds fewer rows than the company's (or one status's) does. */
const hasNarrowerFilter = (query: ListQuery): boolean =>
  Boolean(
    query.assigneeAgentId ||
      query.assigneeUserId ||
      query.projectId ||
      query.parentId ||
      query.labelId ||
      searchTerms(query.q).length > 0,
  );

export function listConditions(companyId: string, query: ListQuery): SQL[] {
  const conditions: SQL[] = [companyCondition(companyId, query)];
  const statuses = parseStatuses(query.status);
  if (statuses) conditions.push(inArray(issues.status, statuses));
  if (query.assigneeAgentId) conditions.push(eq(issues.assigneeAgentId, query.assigneeAgentId));
  if (query.assigneeUserId) conditions.push(eq(issues.assigneeUserId, query.assigneeUserId));
  if (query.projectId) conditions.push(eq(issues.projectId, query.projectId));
  if (query.parentId) conditions.push(eq(issues.parentId, query.parentId));
  if (query.dueBefore) conditions.push(lte(issues.dueDate, query.dueBefore));
  if (query.dueAfter) conditions.push(gte(issues.dueDate, query.dueAfter));
  if (query.labelId)
    conditions.push(
      sql`${issues.id} IN (SELECT ${issueLabels.issueId} FROM ${issueLabels} WHERE ${issueLabels.labelId} = ${query.labelId})`,
    );
  for (const match of searchTerms(query.q)) conditions.push(searchCondition(companyId, match));
  return conditions;
}

/** Where a page ends in the list's order: the last issue's sort key and its number, which breaks ties. */
type Position = [priorityRank: number, createdAt: number, issueNumber: number];

const encodeCursor = (row: Pick<IssueRow, "priorityRank" | "createdAt" | "issueNumber">): string =>
  btoa(JSON.stringify([row.priorityRank, row.createdAt, row.issueNumber])).replace(/=+$/, "");

/** A cursor this list handed out, or 400: it is opaque, so anything else is a client mistake. */
export function decodeCursor(cursor: string): Position {
  let parsed: unknown;
  try {
    parsed = JSON.parse(atob(cursor));
  } catch {
    parsed = null;
  }
  if (Array.isArray(parsed) && parsed.length === 3 && parsed.every(Number.isSafeInteger))
    return parsed as Position;
  throw badRequest(
    "cursor: not a cursor this list handed out (pass X-Next-Cursor from the previous page as is)",
  );
}

/**
 * One page in the documented order: priority (critical first), then oldest first, then issue number
 * (creation order) for ties. The cursor is the last row's position in that order, so issues created,
 * deleted or finished between two pages never shift the rest (no repeats, no gaps, unlike an offset);
 * an issue whose priority changes meanwhile moves with it. `total` counts every match, cursor aside.
 */
export async function listIssues(db: Db, companyId: string, query: ListQuery) {
  if (query.cursor !== undefined && query.offset > 0)
    throw badRequest("cursor and offset cannot be combined: the cursor already says where the page starts");
  const conditions = listConditions(companyId, query);
  const after = query.cursor === undefined ? [] : [afterPosition(decodeCursor(query.cursor))];
  const [rows, total] = await Promise.all([
    pageRows(db, companyId, query, after),
    cappedTotal(db, issues, and(...conditions)),
  ]);
  return { ...pageOf(rows, query.limit, encodeCursor), total };
}

type ListRow = IssueRow & { labelIds: string | null };

const listSelect = (db: Db, conditions: SQL[]) =>
  db
    .select({ ...getTableColumns(issues), labelIds: labelIdsColumn })
    .from(issues)
    .where(and(...conditions))
    .orderBy(...LIST_ORDER);

/**
 * The page's rows (one more than the page, to know whether another follows). Several statuses and no
 * narrower filter (an agent's open work: todo, in progress, blocked) are read one status at a time,
 * each from the status index in the list's order and cut at the page, in one D1 batch, then merged:
 * `status IN (…)` would have SQLite walk the company's whole priority index to avoid a sort, which
 * at 100,000 issues reads them all when the statuses are rare.
 */
async function pageRows(db: Db, companyId: string, query: ListQuery, after: SQL[]): Promise<ListRow[]> {
  const statuses = parseStatuses(query.status) ?? [];
  if (statuses.length < 2 || hasNarrowerFilter(query))
    return listSelect(db, [...listConditions(companyId, query), ...after])
      .limit(query.limit + 1)
      .offset(query.offset);
  const others = listConditions(companyId, { ...query, status: undefined });
  const reach = query.offset + query.limit + 1;
  const [first, ...rest] = statuses.map((status) =>
    listSelect(db, [...others, eq(issues.status, status), ...after]).limit(reach),
  );
  if (!first) return [];
  const pages: ListRow[][] = await db.batch([first, ...rest]);
  return pages.flat().sort(inListOrder).slice(query.offset, reach);
}

/** LIST_ORDER in JavaScript, for rows read in separate statements. */
const inListOrder = (a: ListRow, b: ListRow): number =>
  a.priorityRank - b.priorityRank || a.createdAt - b.createdAt || a.issueNumber - b.issueNumber;

/** Each row's labels in the same statement (a board shows them on every card), comma-joined. */
export const labelIdsColumn = sql<
  string | null
>`(SELECT group_concat(${issueLabels.labelId}) FROM ${issueLabels} WHERE ${issueLabels.issueId} = ${issues.id})`;

const labelIdsOfRow = (joined: string | null): string[] => (joined ? joined.split(",").sort() : []);

/** A list row as the API shows it: the issue with its label ids. */
export const listItemOf = (row: IssueRow & { labelIds: string | null }) => ({
  ...issueResource(row),
  labelIds: labelIdsOfRow(row.labelIds),
});

/** The list's documented order. */
export const LIST_ORDER = [asc(issues.priorityRank), asc(issues.createdAt), asc(issues.issueNumber)] as const;

const afterPosition = ([rank, createdAt, number]: Position): SQL =>
  sql`(${issues.priorityRank}, ${issues.createdAt}, ${issues.issueNumber}) > (${rank}, ${createdAt}, ${number})`;

issueListRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/issues",
    tags: ["Issues"],
    summary: "List the company's issues",
    description:
      "Sorted by priority (critical, high, medium, low), then by creation time (oldest first). Filters " +
      "combine with AND: status (comma-separated), assigneeAgentId, assigneeUserId, projectId, labelId, dueBefore, dueAfter, " +
      "parentId (an id or identifier), and q, a prefix full-text search over title, identifier, description " +
      "and comments (every whitespace-separated term must match). The body is the page, an array (limit " +
      "defaults to 100, max 500); the header X-Total-Count says how many issues match (exact up to 10,000, then X-Total-Capped), and X-Next-Cursor, " +
      "present while more follow, is the `cursor` of the next page (stable while issues are added).",
    security: controlAuth,
    request: { params: CompanyIssuesParamSchema, query: ListIssuesQuerySchema },
    responses: {
      200: {
        ...json(z.array(IssueListItemSchema), "One page of issues"),
        headers: pageHeaders("issues", "cursor"),
      },
      ...controlErrors,
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const query = c.req.valid("query");
    const parentId = query.parentId && (await issueIdIn(db, company.id, query.parentId));
    const page = await listIssues(db, company.id, { ...query, parentId });
    setPageHeaders(c, page.total, page.nextCursor);
    return c.json(page.rows.map(listItemOf), 200);
  },
);
