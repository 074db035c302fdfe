import { and, eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { guardedBy } from "../../auth/credential-guard";
import type { Actor, ActorRef, CredentialGuard } from "../../core/actor";
import type { Db } from "../../db/client";
import {
  companyMemberships,
  type IssueRow,
  type IssueStatus,
  issueLabels,
  issues,
  type JsonObject,
} from "../../db/schema";
import { notFound } from "../../http/errors";
import { activityInsert, issueKeyCondition, refuseViewerWrites, UUID } from "../shared";

/** Shared loaders of the issue endpoints: the issue in the path, its ancestry and its labels. */

/** How far up the parent chain reads go; deeper (or cyclic) chains are cut here. */
export const MAX_ANCESTRY = 50;

/** Raw-SQL form of issueKeyCondition, for the recursive queries. */
function issueKeySql(key: string): SQL {
  if (UUID.test(key)) return sql`id = ${key.toLowerCase()}`;
  return sql`identifier IN (${key}, ${key.toUpperCase()})`;
}

/**
 * The issue named in the path, if the actor may see it, in one query: agents see their company,
 * board users the companies they are members of. Anything else is the 404 an unknown id gets.
 */
export async function findVisibleIssue(db: Db, actor: Actor, key: string): Promise<IssueRow> {
  const condition = issueKeyCondition(key);
  const row =
    actor.type === "agent"
      ? await db
          .select()
          .from(issues)
          .where(and(condition, eq(issues.companyId, actor.companyId)))
          .get()
      : await db
          .select({ issue: issues, role: companyMemberships.role })
          .from(issues)
          .innerJoin(
            companyMemberships,
            and(
              eq(companyMemberships.companyId, issues.companyId),
              eq(companyMemberships.userId, actor.userId),
            ),
          )
          .where(condition)
          .get()
          .then((joined) => {
            if (joined) refuseViewerWrites(actor, joined.role);
            return joined?.issue;
          });
  if (!row) throw notFound("Issue not found");
  return row;
}

export const labelIdsOf = (db: Db, issueId: string) =>
  db.select({ labelId: issueLabels.labelId }).from(issueLabels).where(eq(issueLabels.issueId, issueId));

const ISSUE_COLUMNS = Object.entries(getTableColumns(issues));

/** An issues row read by raw SQL (snake_case columns) as drizzle's IssueRow. */
export function issueFromRaw(raw: Record<string, unknown>): IssueRow {
  return Object.fromEntries(
    ISSUE_COLUMNS.map(([key, column]) => [key, raw[column.name] ?? null]),
  ) as IssueRow;
}

/**
 * One link of the chain: the issue itself (depth 0, every column, plus its label ids and comment
 * count), then each parent (depth ≥ 1), each with its project and goal.
 */
export interface ChainRow {
  depth: number;
  id: string;
  company_id: string;
  identifier: string;
  title: string;
  description: string | null;
  status: IssueStatus;
  priority: IssueRow["priority"];
  assignee_agent_id: string | null;
  project_id: string | null;
  goal_id: string | null;
  p_id: string | null;
  p_name: string | null;
  p_description: string | null;
  p_status: string | null;
  p_goal_id: string | null;
  g_id: string | null;
  g_title: string | null;
  g_description: string | null;
  g_level: string | null;
  g_status: string | null;
  /** Comma-separated (ids are UUIDs); depth 0 only. */
  label_ids: string | null;
  /** Comma-separated blockedByIssueIds; depth 0 only. */
  blocker_ids: string | null;
  comment_count: number | null;
  [column: string]: unknown;
}

/**
 * Whose view a chain is read for: an actor (what it may see), or one company (an IssueDO reading its
 * own issue, after the caller's access was checked in the Worker).
 */
export type ChainScope = Actor | { type: "company"; companyId: string };

/** Raw-SQL form of "the scope may see the issue's company". */
function visibleSql(scope: ChainScope): SQL {
  return scope.type === "board"
    ? sql`company_id IN (SELECT company_id FROM company_memberships WHERE user_id = ${scope.userId})`
    : sql`company_id = ${scope.companyId}`;
}

/**
 * The issue in the path (if the actor may see it) and its ancestors, nearest first, with their
 * projects and goals and the issue's labels and comment count: ONE recursive query however deep
 * the tree, which is what keeps GET /issues/:id cheap. Cut at MAX_ANCESTRY (a cycle is cut where
 * it repeats, see `ancestorsOf`). No rows: the 404.
 */
export function chainQuery(db: Db, scope: ChainScope, key: string) {
  return db.all<ChainRow>(sql`
    WITH RECURSIVE chain(id, depth) AS (
      SELECT id, 0 FROM issues WHERE ${issueKeySql(key)} AND ${visibleSql(scope)}
      UNION ALL
      SELECT i.parent_id, chain.depth + 1 FROM chain JOIN issues i ON i.id = chain.id
      WHERE i.parent_id IS NOT NULL AND chain.depth < ${MAX_ANCESTRY}
    )
    SELECT chain.depth AS depth, i.*,
      p.id AS p_id, p.name AS p_name, p.description AS p_description, p.status AS p_status,
      p.goal_id AS p_goal_id, g.id AS g_id, g.title AS g_title, g.description AS g_description,
      g.level AS g_level, g.status AS g_status,
      CASE WHEN chain.depth = 0 THEN
        (SELECT group_concat(label_id) FROM (SELECT label_id FROM issue_labels WHERE issue_id = i.id ORDER BY label_id))
      END AS label_ids,
      CASE WHEN chain.depth = 0 THEN
        (SELECT group_concat(blocker_issue_id) FROM (SELECT blocker_issue_id FROM issue_blockers WHERE issue_id = i.id ORDER BY created_at, blocker_issue_id))
      END AS blocker_ids,
      CASE WHEN chain.depth = 0 THEN (SELECT count(*) FROM issue_comments WHERE issue_id = i.id) END AS comment_count
    FROM chain
    JOIN issues i ON i.id = chain.id
    LEFT JOIN projects p ON p.id = i.project_id AND p.company_id = i.company_id
    LEFT JOIN goals g ON g.id = i.goal_id AND g.company_id = i.company_id
    ORDER BY chain.depth`);
}

/** The issue out of a chain (its depth-0 row), or the 404. */
export function chainIssueOf(chain: ChainRow[]): { issue: IssueRow; self: ChainRow } {
  const self = chain[0];
  if (self?.depth !== 0) throw notFound("Issue not found");
  return { issue: issueFromRaw(self), self };
}

export const labelIdsFromChain = (self: ChainRow): string[] =>
  self.label_ids ? self.label_ids.split(",") : [];
export const blockerIdsFromChain = (self: ChainRow): string[] =>
  self.blocker_ids ? self.blocker_ids.split(",") : [];

export const projectOf = (row: ChainRow) =>
  row.p_id === null
    ? null
    : {
        id: row.p_id,
        name: row.p_name ?? "",
        description: row.p_description,
        status: row.p_status ?? "",
        goalId: row.p_goal_id,
      };

export const goalOf = (row: ChainRow) =>
  row.g_id === null
    ? null
    : {
        id: row.g_id,
        title: row.g_title ?? "",
        description: row.g_description,
        level: row.g_level ?? "",
        status: row.g_status ?? "",
      };

/**
 * The ancestors out of a chain (depth ≥ 1), nearest first. A link into another company or back to
 * an issue already seen ends the walk: parent ids are validated on write, this is the belt to that.
 */
export function ancestorsOf(chain: ChainRow[], issue: IssueRow): ChainRow[] {
  const seen = new Set([issue.id]);
  const ancestors: ChainRow[] = [];
  for (const row of chain) {
    if (row.depth === 0) continue;
    if (seen.has(row.id) || row.company_id !== issue.companyId) break;
    seen.add(row.id);
    ancestors.push(row);
  }
  return ancestors;
}

export type Statement = BatchItem<"sqlite">;

/** Commits the statements as one D1 batch (one transaction) with the guard's check; no statements write nothing. */
export async function commitBatch(db: Db, statements: Statement[], guard?: CredentialGuard): Promise<void> {
  // A guarded write that changes nothing still asks its guard: its answer shows the issue.
  const [first, ...rest] = [...statements, ...guardedBy(db, guard)];
  if (first) await db.batch([first, ...rest]);
}

/** The activity row for `action` on `issue`, unexecuted, to join the batch of the change it records. */
export const issueActivity = (
  db: Db,
  issue: IssueRow,
  actor: ActorRef,
  action: string,
  details: JsonObject,
  now: number,
) =>
  activityInsert(
    db,
    { companyId: issue.companyId, actor, action, entityType: "issue", entityId: issue.id, details },
    now,
  );
