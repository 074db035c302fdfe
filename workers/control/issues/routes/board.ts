import { createRoute, z } from "@hono/zod-openapi";
import { and, eq, getTableColumns } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { ISSUE_STATUSES, type IssueStatus, issues } from "../../../db/schema";
import { controlAuth, controlErrors, createRouter, json } from "../../../http/openapi";
import {
  cappedCountQuery,
  companyForActor,
  controlContext,
  issueIdIn,
  TOTAL_CAP,
  totalOf,
} from "../../shared";
import { CompanyIssuesParamSchema, IssueListItemSchema, ListIssuesQuerySchema } from "../schemas";
import {
  LIST_ORDER,
  type ListQuery,
  labelIdsColumn,
  listConditions,
  listItemOf,
  parseStatuses,
} from "./list";

/**
 * The board in one read: per status column, its first cards in the list's order and how many it holds.
 * Each column is two index-served statements (the page and a capped count), all sent in one D1 batch,
 * so a board of 100,000 issues reads about what a board of 200 does (issue 31).
 */
export const issueBoardRoutes = createRouter();

const BoardQuerySchema = ListIssuesQuerySchema.omit({ limit: true, cursor: true, offset: true }).extend({
  perColumn: z.coerce.number().int().min(1).max(200).default(50).openapi({
    description: "Cards per column (the rest are reached through the list with status=<column>)",
  }),
});

const BoardColumnSchema = z
  .object({
    status: z.enum(ISSUE_STATUSES),
    total: z
      .number()
      .int()
      .openapi({ description: `Issues in the column, counted up to ${TOTAL_CAP}` }),
    totalCapped: z.boolean().openapi({ description: `True when more than ${TOTAL_CAP} are in the column` }),
    issues: z.array(IssueListItemSchema),
  })
  .openapi("IssueBoardColumn");

const BoardSchema = z.object({ columns: z.array(BoardColumnSchema) }).openapi("IssueBoard");

type BoardQuery = z.infer<typeof BoardQuerySchema>;

async function boardOf(db: Db, companyId: string, query: BoardQuery) {
  const statuses: readonly IssueStatus[] = parseStatuses(query.status) ?? ISSUE_STATUSES;
  const filters: ListQuery = { ...query, status: undefined, limit: query.perColumn, offset: 0 };
  const base = listConditions(companyId, filters);
  const inColumn = (status: IssueStatus) => and(...base, eq(issues.status, status));
  const pages = statuses.map((status) =>
    db
      .select({ ...getTableColumns(issues), labelIds: labelIdsColumn })
      .from(issues)
      .where(inColumn(status))
      .orderBy(...LIST_ORDER)
      .limit(query.perColumn),
  );
  const counts = statuses.map((status) => cappedCountQuery(db, issues, inColumn(status)));
  const [first, ...rest] = [...pages, ...counts];
  if (!first) return { columns: [] };
  const results = await db.batch([first, ...rest]);
  return {
    columns: statuses.map((status, index) => {
      const total = totalOf(results[statuses.length + index] as Array<{ n: number }>);
      const rows = results[index] as Array<Parameters<typeof listItemOf>[0]>;
      return { status, total: total.count, totalCapped: total.capped, issues: rows.map(listItemOf) };
    }),
  };
}

issueBoardRoutes.openapi(
  createRoute({
    method: "get",
    path: "/companies/{companyId}/issues/board",
    tags: ["Issues"],
    summary: "The company's issues as a board: one column per status",
    description:
      "Each column holds its first `perColumn` issues (default 50) in the list's order and its total. " +
      "Takes the list's filters (status limits the columns to those statuses).",
    security: controlAuth,
    request: { params: CompanyIssuesParamSchema, query: BoardQuerySchema },
    responses: { 200: json(BoardSchema, "The board"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const company = await companyForActor(db, actor, c.req.valid("param").companyId);
    const query = c.req.valid("query");
    const parentId = query.parentId && (await issueIdIn(db, company.id, query.parentId));
    return c.json(await boardOf(db, company.id, { ...query, parentId }), 200);
  },
);
