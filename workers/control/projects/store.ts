import { asc, eq, sql } from "drizzle-orm";
import type { Actor } from "../../core/actor";
import type { Db } from "../../db/client";
import { iso } from "../../db/client";
import {
  type ProjectRow,
  projectGoals,
  projects,
  projectWorkspaces,
  type WorkspaceRow,
} from "../../db/schema";
import { badRequest, unprocessable } from "../../http/errors";
import { assertCompanyAgent, assertCompanyGoals } from "../companies";
import { ensureVisible } from "../shared";

/** Project rows with their goals and workspaces: loading, rendering and the checks of a body's references. */

export const workspaceResource = (row: WorkspaceRow) => ({
  id: row.id,
  companyId: row.companyId,
  projectId: row.projectId,
  name: row.name,
  cwd: row.cwd,
  repoUrl: row.repoUrl,
  repoRef: row.repoRef,
  isPrimary: row.isPrimary,
  createdAt: iso(row.createdAt),
  updatedAt: iso(row.updatedAt),
});

export function projectResource(row: ProjectRow, goalIds: string[], workspaces: WorkspaceRow[]) {
  const rendered = workspaces.map(workspaceResource);
  return {
    id: row.id,
    companyId: row.companyId,
    name: row.name,
    description: row.description,
    status: row.status,
    goalId: row.goalId,
    goalIds,
    leadAgentId: row.leadAgentId,
    primaryWorkspace: rendered.find((workspace) => workspace.isPrimary) ?? null,
    workspaces: rendered,
    archivedAt: row.archivedAt === null ? null : iso(row.archivedAt),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

/** Oldest first: the order in which a deleted primary's successor is chosen. */
const workspaceOrder = [asc(projectWorkspaces.createdAt), asc(sql`${projectWorkspaces}.rowid`)];

export function listWorkspaces(db: Db, projectId: string): Promise<WorkspaceRow[]> {
  return db
    .select()
    .from(projectWorkspaces)
    .where(eq(projectWorkspaces.projectId, projectId))
    .orderBy(...workspaceOrder);
}

/** goalId first, then the others in the order they were linked. */
function orderedGoalIds(row: ProjectRow, links: Array<{ goalId: string }>): string[] {
  const ids = links.map((link) => link.goalId);
  return row.goalId && ids.includes(row.goalId)
    ? [row.goalId, ...ids.filter((id) => id !== row.goalId)]
    : ids;
}

/**
 * The project JSON for several rows with two queries, not two per project. A list selects by company
 * rather than by a list of project ids, which could exceed D1's 100 bound parameters.
 */
export async function renderProjects(db: Db, rows: ProjectRow[]) {
  const [first] = rows;
  if (!first) return [];
  const single = rows.length === 1;
  const [links, workspaces] = await Promise.all([
    db
      .select({ projectId: projectGoals.projectId, goalId: projectGoals.goalId })
      .from(projectGoals)
      .where(single ? eq(projectGoals.projectId, first.id) : eq(projectGoals.companyId, first.companyId))
      .orderBy(asc(sql`${projectGoals}.rowid`)),
    db
      .select()
      .from(projectWorkspaces)
      .where(
        single ? eq(projectWorkspaces.projectId, first.id) : eq(projectWorkspaces.companyId, first.companyId),
      )
      .orderBy(...workspaceOrder),
  ]);
  return rows.map((row) =>
    projectResource(
      row,
      orderedGoalIds(
        row,
        links.filter((link) => link.projectId === row.id),
      ),
      workspaces.filter((workspace) => workspace.projectId === row.id),
    ),
  );
}

export async function renderProject(db: Db, row: ProjectRow) {
  const [rendered] = await renderProjects(db, [row]);
  return rendered as NonNullable<typeof rendered>;
}

export async function listProjects(db: Db, companyId: string): Promise<ProjectRow[]> {
  return db
    .select()
    .from(projects)
    .where(eq(projects.companyId, companyId))
    .orderBy(asc(projects.createdAt), asc(projects.id));
}

/** The project named in the path: 404 when unknown or in a company the caller cannot see. */
export async function visibleProject(db: Db, actor: Actor, projectId: string): Promise<ProjectRow> {
  const row = await db.select().from(projects).where(eq(projects.id, projectId)).get();
  return ensureVisible(db, actor, row, "Project");
}

/** goalIds, or the goalId shorthand; undefined when the body names neither. Duplicates collapse. */
export function requestedGoalIds(body: { goalIds?: string[]; goalId?: string | null }): string[] | undefined {
  if (body.goalIds !== undefined && body.goalId !== undefined) {
    throw badRequest("Send goalIds or goalId, not both");
  }
  if (body.goalIds !== undefined) return [...new Set(body.goalIds)];
  if (body.goalId !== undefined) return body.goalId === null ? [] : [body.goalId];
  return undefined;
}

/** Every goal and the lead agent the body names must belong to the project's company (422). */
export async function assertProjectRefs(
  db: Db,
  companyId: string,
  refs: { goalIds?: string[]; leadAgentId?: string | null },
): Promise<void> {
  if (refs.goalIds) await assertCompanyGoals(db, companyId, refs.goalIds);
  if (refs.leadAgentId) await assertCompanyAgent(db, companyId, refs.leadAgentId, "leadAgentId");
}

/** The statements that make `goalIds` the project's goals (run inside the caller's batch). */
export function goalLinkStatements(db: Db, project: { id: string; companyId: string }, goalIds: string[]) {
  const statements = [db.delete(projectGoals).where(eq(projectGoals.projectId, project.id))];
  if (goalIds.length === 0) return statements;
  // One insert per goal: a multi-row insert of 50 goals would pass D1's 100 bound parameters.
  return [
    ...statements,
    ...goalIds.map((goalId) =>
      db.insert(projectGoals).values({ projectId: project.id, goalId, companyId: project.companyId }),
    ),
  ];
}

/** The workspace rule: a workspace says where the code is, locally (cwd) or as a repository. */
export function assertWorkspaceLocation(fields: { cwd: string | null; repoUrl: string | null }): void {
  if (fields.cwd === null && fields.repoUrl === null) {
    throw unprocessable("A workspace needs at least one of cwd or repoUrl");
  }
}

/** "https://github.com/acme/app.git" → "app"; "/srv/site/" → "site". */
export function defaultWorkspaceName(fields: { cwd: string | null; repoUrl: string | null }): string {
  const lastSegment = (value: string) =>
    value
      .split(/[/:\\]/)
      .filter((part) => part.length > 0)
      .pop();
  const fromRepo = fields.repoUrl ? lastSegment(fields.repoUrl)?.replace(/\.git$/, "") : undefined;
  const fromCwd = fields.cwd ? lastSegment(fields.cwd) : undefined;
  return (fromRepo || fromCwd || "workspace").slice(0, 200);
}
