import { eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import { type ActorRef, authorColumns } from "../../core/actor";
import type { Db } from "../../db/client";
import {
  type CompanyRow,
  companies,
  ISSUE_PRIORITIES,
  type IssueRow,
  type IssueStatus,
  issues,
} from "../../db/schema";
import type { CreateIssueBody } from "./schemas";
import type { Statement } from "./store";

export interface NewIssue {
  id: string;
  company: Pick<CompanyRow, "id">;
  body: CreateIssueBody;
  status: IssueStatus;
  /** null: no person or agent asked (a routine's schedule or webhook); no author columns. */
  actor: ActorRef | null;
  now: number;
  /** Execution issues of routines (workers/control/routines/dispatch.ts): the routine that created the issue. */
  originRoutineId?: string | null;
  /** The routine allows one open execution issue at a time (see issues.origin_exclusive). */
  originExclusive?: boolean;
}

/**
 * The issue insert numbered from the company's counter, which the statement before it bumped in
 * the same batch: the batch is one transaction, so concurrent creates never share a number.
 * `INSERT … SELECT … FROM companies`: the values list follows the table's column order.
 */
function numberedInsert(db: Db, issue: NewIssue) {
  const { body, now } = issue;
  const author = issue.actor ? authorColumns(issue.actor) : { userId: null, agentId: null };
  const priority = body.priority ?? "medium";
  const fromCompany: Partial<Record<keyof IssueRow, SQL>> = {
    companyId: sql`c.id`,
    issueNumber: sql`c.issue_counter`,
    identifier: sql`c.issue_prefix || '-' || c.issue_counter`,
    originExclusive: sql`${issue.originExclusive ? 1 : 0}`,
  };
  const values: Partial<IssueRow> = {
    id: issue.id,
    projectId: body.projectId ?? null,
    goalId: body.goalId ?? null,
    parentId: body.parentId ?? null,
    title: body.title,
    description: body.description ?? null,
    status: issue.status,
    priority,
    priorityRank: ISSUE_PRIORITIES.indexOf(priority),
    assigneeAgentId: body.assigneeAgentId ?? null,
    assigneeUserId: body.assigneeUserId ?? null,
    dueDate: body.dueDate ?? null,
    createdByUserId: author.userId,
    createdByAgentId: author.agentId,
    originRoutineId: issue.originRoutineId ?? null,
    createdAt: now,
    updatedAt: now,
  };
  const columns = Object.keys(getTableColumns(issues)) as Array<keyof IssueRow>;
  const list = columns.map((key) => fromCompany[key] ?? sql`${values[key] ?? null}`);
  return db
    .insert(issues)
    .select(sql`SELECT ${sql.join(list, sql`, `)} FROM companies c WHERE c.id = ${issue.company.id}`);
}

/**
 * The company counter bump and the numbered insert, in this order, for the caller's batch (the
 * insert reads the counter the bump just moved). Shared with routine execution issues.
 */
export function numberedIssueStatements(db: Db, issue: NewIssue): [Statement, Statement] {
  return [counterBump(db, issue), numberedInsert(db, issue)];
}

/**
 * The same, the insert answering the row as committed (number, identifier): the create route's batch
 * needs it back, and RETURNING spares a statement reading it again.
 */
export function numberedIssueReturning(db: Db, issue: NewIssue) {
  return [counterBump(db, issue), numberedInsert(db, issue).returning()] as const;
}

const counterBump = (db: Db, issue: NewIssue) =>
  db
    .update(companies)
    .set({ issueCounter: sql`${companies.issueCounter} + 1` })
    .where(eq(companies.id, issue.company.id));
