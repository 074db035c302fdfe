/**
 * Where a run works, and which of a runner's worktrees may go. A run on an issue of a project whose
 * primary workspace has a cwd works there (the runner gives the issue its own git worktree of it);
 * otherwise in adapterConfig.cwd. A runner asks which of the issues it holds worktrees for are closed;
 * the answer only ever speaks about issues of the companies it serves.
 */
import { and, eq, inArray, isNotNull, notInArray, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type HeartbeatRunRow, issues, projectWorkspaces, type RunnerRow, runners } from "../../db/schema";
import { coveredCompanyIds } from "../runners";

/** Statuses after which an issue's worktree is removed (its branch stays). */
const CLOSED_STATUSES = ["done", "cancelled"] as const;

export interface RunWorkspace {
  /** The project's primary workspace's cwd; null: none (the agent's cwd applies). */
  cwd: string | null;
  issue: { id: string; identifier: string } | null;
}

/** The run's issue (of its own company) and its project's primary workspace cwd. */
export async function runWorkspace(db: Db, run: HeartbeatRunRow): Promise<RunWorkspace> {
  if (!run.issueId) return { cwd: null, issue: null };
  const row = await db
    .select({ id: issues.id, identifier: issues.identifier, cwd: projectWorkspaces.cwd })
    .from(issues)
    .leftJoin(
      projectWorkspaces,
      and(
        eq(projectWorkspaces.projectId, issues.projectId),
        eq(projectWorkspaces.companyId, issues.companyId),
        eq(projectWorkspaces.isPrimary, true),
        isNotNull(projectWorkspaces.cwd),
      ),
    )
    .where(and(eq(issues.id, run.issueId), eq(issues.companyId, run.companyId)))
    .get();
  if (!row) return { cwd: null, issue: null };
  return { cwd: row.cwd ?? null, issue: { id: row.id, identifier: row.identifier } };
}

/**
 * Of `issueIds`, those the runner may drop the worktree of: closed, deleted, or not of a company it
 * serves (any more). Open issues of its companies are the only ones kept, so the answer tells a
 * runner nothing about other companies' issues.
 */
export async function closedIssueIds(db: Db, runnerId: string, issueIds: string[]): Promise<string[]> {
  if (issueIds.length === 0) return [];
  const runner: RunnerRow | undefined = await db.select().from(runners).where(eq(runners.id, runnerId)).get();
  if (!runner) return issueIds;
  const open = new Set<string>();
  // D1 caps bound parameters per statement; 100 ids at a time stays far below it.
  for (let at = 0; at < issueIds.length; at += 100) {
    const rows = await db
      .select({ id: issues.id })
      .from(issues)
      .where(
        and(
          inArray(issues.id, issueIds.slice(at, at + 100)),
          notInArray(issues.status, [...CLOSED_STATUSES]),
          sql`${issues.companyId} IN ${coveredCompanyIds(runner)}`,
        ),
      );
    for (const row of rows) open.add(row.id);
  }
  return issueIds.filter((id) => !open.has(id));
}
