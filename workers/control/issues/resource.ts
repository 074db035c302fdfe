import type { IssueRow } from "../../db/schema";

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/**
 * An issue as every endpoint returns it. The spec names the two automatic timestamps `started_at`
 * and `completed_at`; they are sent under those names and, like every other field, in camelCase too.
 */
export function issueResource(row: IssueRow) {
  const startedAt = isoOrNull(row.startedAt);
  const completedAt = isoOrNull(row.completedAt);
  return {
    id: row.id,
    companyId: row.companyId,
    identifier: row.identifier,
    issueNumber: row.issueNumber,
    title: row.title,
    description: row.description,
    status: row.status,
    priority: row.priority,
    parentId: row.parentId,
    projectId: row.projectId,
    goalId: row.goalId,
    assigneeAgentId: row.assigneeAgentId,
    assigneeUserId: row.assigneeUserId,
    dueDate: row.dueDate,
    createdByUserId: row.createdByUserId,
    createdByAgentId: row.createdByAgentId,
    startedAt,
    completedAt,
    cancelledAt: isoOrNull(row.cancelledAt),
    checkoutRunId: row.checkoutRunId,
    originRoutineId: row.originRoutineId,
    started_at: startedAt,
    completed_at: completedAt,
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
}

export type IssueResource = ReturnType<typeof issueResource>;
