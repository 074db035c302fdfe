import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type AgentRow, agents, companyMemberships, goals, issues, labels, projects } from "../../db/schema";
import { unprocessable } from "../../http/errors";
import { issueIdIn, issueIdsIn } from "../shared";

/**
 * Checks of the ids an issue create or update refers to. Every one must be in the issue's company;
 * a miss is a 422 naming the field (the body was well-formed, its content breaks a rule).
 */
export interface IssueReferences {
  parentId?: string | null;
  projectId?: string | null;
  goalId?: string | null;
  assigneeAgentId?: string | null;
  assigneeUserId?: string | null;
  labelIds?: string[];
}

/** Agents in these states can receive no work. */
const UNASSIGNABLE = new Set<AgentRow["status"]>(["pending_approval", "terminated"]);

/** Far enough to find any cycle a well-formed tree could be closing; bounded so a bad one ends. */
const CYCLE_SEARCH_DEPTH = 1000;

const missing = (field: string, what: string) =>
  unprocessable(`${field}: no such ${what} in this company`, { field });

export function assertOneAssignee(refs: IssueReferences): void {
  if (refs.assigneeAgentId && refs.assigneeUserId)
    throw unprocessable(
      "An issue has one assignee at a time: send assigneeAgentId or assigneeUserId, not both",
      {
        fields: ["assigneeAgentId", "assigneeUserId"],
      },
    );
}

async function checkAssigneeAgent(db: Db, companyId: string, agentId: string): Promise<void> {
  const agent = await db
    .select({ status: agents.status })
    .from(agents)
    .where(and(eq(agents.id, agentId), eq(agents.companyId, companyId)))
    .get();
  if (!agent) throw missing("assigneeAgentId", "agent");
  if (UNASSIGNABLE.has(agent.status))
    throw unprocessable(`assigneeAgentId: a ${agent.status} agent cannot receive assignments`, {
      field: "assigneeAgentId",
      agentStatus: agent.status,
    });
}

async function checkAssigneeUser(db: Db, companyId: string, userId: string): Promise<void> {
  const member = await db
    .select({ userId: companyMemberships.userId })
    .from(companyMemberships)
    .where(and(eq(companyMemberships.companyId, companyId), eq(companyMemberships.userId, userId)))
    .get();
  if (!member) throw missing("assigneeUserId", "board member");
}

/** Whether `issueId` is `parentId` or one of its ancestors: then the new link would close a loop. */
async function wouldCycle(db: Db, issueId: string, parentId: string): Promise<boolean> {
  if (issueId === parentId) return true;
  const hit = await db.get<{ found: number } | undefined>(sql`
    WITH RECURSIVE up(id, depth) AS (
      SELECT ${parentId}, 0
      UNION ALL
      SELECT i.parent_id, up.depth + 1 FROM up JOIN issues i ON i.id = up.id
      WHERE i.parent_id IS NOT NULL AND up.depth < ${CYCLE_SEARCH_DEPTH}
    )
    SELECT 1 AS found FROM up WHERE id = ${issueId} LIMIT 1`);
  return hit !== undefined && hit !== null;
}

async function checkParent(db: Db, companyId: string, parentId: string, selfId?: string): Promise<void> {
  const parent = await db
    .select({ id: issues.id })
    .from(issues)
    .where(and(eq(issues.id, parentId), eq(issues.companyId, companyId)))
    .get();
  if (!parent) throw missing("parentId", "issue");
  if (selfId !== undefined && (await wouldCycle(db, selfId, parentId)))
    throw unprocessable("parentId: the issue would become its own ancestor", { field: "parentId" });
}

async function checkRow(db: Db, table: typeof projects | typeof goals, companyId: string, id: string) {
  const row = await db
    .select({ id: table.id })
    .from(table)
    .where(and(eq(table.id, id), eq(table.companyId, companyId)))
    .get();
  return row !== undefined;
}

async function checkLabels(db: Db, companyId: string, labelIds: string[]): Promise<void> {
  const wanted = [...new Set(labelIds)];
  if (wanted.length === 0) return;
  const found = await db
    .select({ id: labels.id })
    .from(labels)
    .where(and(inArray(labels.id, wanted), eq(labels.companyId, companyId)));
  if (found.length !== wanted.length) {
    const known = new Set(found.map((row) => row.id));
    throw unprocessable("labelIds: no such label in this company", {
      field: "labelIds",
      unknown: wanted.filter((id) => !known.has(id)),
    });
  }
}

/**
 * Runs every applicable check (independent reads, in parallel). `selfId` is the issue being updated,
 * for the cycle check on parentId; a create has none.
 */
export async function checkReferences(
  db: Db,
  companyId: string,
  refs: IssueReferences,
  selfId?: string,
): Promise<void> {
  assertOneAssignee(refs);
  const checks: Array<Promise<void>> = [];
  if (refs.assigneeAgentId) checks.push(checkAssigneeAgent(db, companyId, refs.assigneeAgentId));
  if (refs.assigneeUserId) checks.push(checkAssigneeUser(db, companyId, refs.assigneeUserId));
  if (refs.parentId) checks.push(checkParent(db, companyId, refs.parentId, selfId));
  const { projectId, goalId } = refs;
  if (projectId)
    checks.push(
      checkRow(db, projects, companyId, projectId).then((ok) => {
        if (!ok) throw missing("projectId", "project");
      }),
    );
  if (goalId)
    checks.push(
      checkRow(db, goals, companyId, goalId).then((ok) => {
        if (!ok) throw missing("goalId", "goal");
      }),
    );
  if (refs.labelIds) checks.push(checkLabels(db, companyId, refs.labelIds));
  // allSettled first: every read finishes before the first failure is reported (no stray promises).
  const results = await Promise.allSettled(checks);
  const failure = results.find((result) => result.status === "rejected");
  if (failure) throw failure.reason;
}

/**
 * A create or update body with its issue references (parentId, blockedByIssueIds) named by id, where
 * the caller may have used identifiers (`ACM-2`). Unknown keys stay as sent for the checks to refuse.
 */
export async function withIssueIds<T extends { parentId?: string | null; blockedByIssueIds?: string[] }>(
  db: Db,
  companyId: string,
  body: T,
): Promise<T> {
  const [parentId, blockedByIssueIds] = await Promise.all([
    issueIdIn(db, companyId, body.parentId),
    body.blockedByIssueIds === undefined ? undefined : issueIdsIn(db, companyId, body.blockedByIssueIds),
  ]);
  return { ...body, parentId, blockedByIssueIds };
}
