import { and, asc, eq, inArray, ne } from "drizzle-orm";
import type { Db } from "../../db/client";
import {
  type AgentRow,
  agents,
  type CompanyRow,
  type GoalRow,
  goals,
  type IssueRow,
  issueComments,
  issueDocuments,
  issueLabels,
  issues,
  labels,
  type ProjectRow,
  projectGoals,
  projects,
  projectWorkspaces,
  type RoutineRow,
  routines,
  routineTriggers,
} from "../../db/schema";
import { skillsOf } from "../agents";
import {
  type Include,
  type PackageModel,
  type PkgAgent,
  type PkgTask,
  type PkgTrigger,
  uniqueSlug,
} from "./model";
import { stripSecrets } from "./secrets";
import { skillModels } from "./skills";

/** Reads one company into a PackageModel: ids become slugs, secrets are stripped. */

type SlugMap = Map<string, string>;

/** Oldest first (then id), so slugs and file order are stable across exports. */
const byAge = <T extends { createdAt: number; id: string }>(rows: T[]) =>
  [...rows].sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));

function assignSlugs<T extends { id: string; createdAt: number }>(
  rows: T[],
  label: (row: T) => string,
  fallback: string,
): SlugMap {
  const taken = new Set<string>();
  return new Map(byAge(rows).map((row) => [row.id, uniqueSlug(label(row), fallback, taken)]));
}

const ref = (slugs: SlugMap, id: string | null) => (id ? (slugs.get(id) ?? null) : null);

function agentModel(row: AgentRow, slugs: SlugMap, envInputs: PackageModel["envInputs"]): PkgAgent {
  const slug = slugs.get(row.id) ?? "";
  const { promptTemplate, ...rest } = row.adapterConfig;
  const { config, removed } = stripSecrets(rest);
  for (const name of removed) envInputs.push({ agent: slug, name });
  return {
    slug,
    name: row.name,
    role: row.role,
    title: row.title,
    icon: row.icon,
    capabilities: row.capabilities,
    reportsTo: ref(slugs, row.reportsTo),
    adapterType: row.adapterType,
    adapterConfig: config,
    runtimeConfig: stripSecrets(row.runtimeConfig).config,
    desiredSkills: row.desiredSkills,
    budgetMonthlyCents: row.budgetMonthlyCents,
    instructions: typeof promptTemplate === "string" ? promptTemplate : "",
  };
}

const goalModel = (row: GoalRow, goalSlugs: SlugMap, agentSlugs: SlugMap) => ({
  slug: goalSlugs.get(row.id) ?? "",
  title: row.title,
  description: row.description,
  level: row.level,
  status: row.status,
  parent: ref(goalSlugs, row.parentId),
  owner: ref(agentSlugs, row.ownerAgentId),
});

async function projectModels(
  db: Db,
  rows: ProjectRow[],
  slugs: SlugMap,
  goalSlugs: SlugMap,
  agentSlugs: SlugMap,
) {
  const ids = rows.map((row) => row.id);
  const links = ids.length
    ? await db.select().from(projectGoals).where(inArray(projectGoals.projectId, ids))
    : [];
  const spaces = ids.length
    ? await db.select().from(projectWorkspaces).where(inArray(projectWorkspaces.projectId, ids))
    : [];
  return byAge(rows).map((row) => {
    const linked = links.filter((link) => link.projectId === row.id).map((link) => link.goalId);
    const ordered =
      row.goalId && linked.includes(row.goalId)
        ? [row.goalId, ...linked.filter((id) => id !== row.goalId)]
        : linked;
    return {
      slug: slugs.get(row.id) ?? "",
      name: row.name,
      description: row.description,
      status: row.status,
      goals: ordered.map((id) => goalSlugs.get(id)).filter((slug): slug is string => slug !== undefined),
      lead: ref(agentSlugs, row.leadAgentId),
      workspaces: byAge(spaces.filter((space) => space.projectId === row.id)).map((space) => ({
        name: space.name,
        cwd: space.cwd,
        repoUrl: space.repoUrl,
        repoRef: space.repoRef,
        isPrimary: space.isPrimary,
      })),
    };
  });
}

async function routineModels(db: Db, rows: RoutineRow[], agentSlugs: SlugMap, projectSlugs: SlugMap) {
  // A routine needs its assignee and project; without them in the package it cannot be recreated.
  const kept = byAge(rows).filter(
    (row) => agentSlugs.has(row.assigneeAgentId) && projectSlugs.has(row.projectId),
  );
  const ids = kept.map((row) => row.id);
  const triggers = ids.length
    ? byAge(await db.select().from(routineTriggers).where(inArray(routineTriggers.routineId, ids)))
    : [];
  const taken = new Set<string>();
  return kept.map((row) => ({
    slug: uniqueSlug(row.title, "routine", taken),
    title: row.title,
    description: row.description,
    assignee: agentSlugs.get(row.assigneeAgentId) ?? "",
    project: projectSlugs.get(row.projectId) ?? "",
    priority: row.priority as PkgTask["priority"],
    status: row.status,
    concurrencyPolicy: row.concurrencyPolicy,
    catchUpPolicy: row.catchUpPolicy,
    // Webhook secrets and public ids belong to this instance: the receiver gets fresh ones.
    triggers: triggers
      .filter((trigger) => trigger.routineId === row.id)
      .map((trigger): PkgTrigger => {
        const base = { label: trigger.label, enabled: trigger.enabled };
        if (trigger.kind === "schedule")
          return {
            kind: "schedule",
            ...base,
            cronExpression: trigger.cronExpression ?? "",
            timezone: trigger.timezone ?? "UTC",
          };
        if (trigger.kind === "webhook")
          return { kind: "webhook", ...base, replayWindowSec: trigger.replayWindowSec ?? undefined };
        return { kind: "api", ...base };
      }),
  }));
}

interface TaskRefs {
  tasks: SlugMap;
  agents: SlugMap;
  projects: SlugMap;
  goals: SlugMap;
}

/** Each issue's label names, alphabetical (a package names labels; ids are the instance's own). */
async function labelNamesOf(db: Db, issueIds: string[]): Promise<Map<string, string[]>> {
  const names = new Map<string, string[]>();
  if (issueIds.length === 0) return names;
  const rows = await db
    .select({ issueId: issueLabels.issueId, name: labels.name })
    .from(issueLabels)
    .innerJoin(labels, eq(labels.id, issueLabels.labelId))
    .where(inArray(issueLabels.issueId, issueIds))
    .orderBy(asc(labels.name));
  for (const row of rows) names.set(row.issueId, [...(names.get(row.issueId) ?? []), row.name]);
  return names;
}

async function taskModels(db: Db, rows: IssueRow[], refs: TaskRefs): Promise<PkgTask[]> {
  const ids = rows.map((row) => row.id);
  const comments = ids.length
    ? byAge(await db.select().from(issueComments).where(inArray(issueComments.issueId, ids)))
    : [];
  const documents = ids.length
    ? await db.select().from(issueDocuments).where(inArray(issueDocuments.issueId, ids))
    : [];
  const labelNames = await labelNamesOf(db, ids);
  return byAge(rows).map((row) => ({
    slug: refs.tasks.get(row.id) ?? "",
    identifier: row.identifier,
    title: row.title,
    description: row.description,
    status: row.status,
    priority: row.priority,
    parent: ref(refs.tasks, row.parentId),
    project: ref(refs.projects, row.projectId),
    goal: ref(refs.goals, row.goalId),
    assignee: ref(refs.agents, row.assigneeAgentId),
    dueDate: row.dueDate,
    labels: labelNames.get(row.id) ?? [],
    comments: comments
      .filter((comment) => comment.issueId === row.id)
      .map((comment) => ({ author: ref(refs.agents, comment.authorAgentId) ?? "board", body: comment.body })),
    documents: documents
      .filter((document) => document.issueId === row.id)
      .sort((a, b) => a.key.localeCompare(b.key))
      .map((document) => ({ key: document.key, title: document.title, body: document.latestBody })),
  }));
}

const companyRows = <T>(run: () => Promise<T[]>, wanted: boolean): Promise<T[]> =>
  wanted ? run() : Promise.resolve([]);

/** The whole company as a model, narrowed by `include` (see docs/packages.md for what each flag covers). */
export async function exportModel(db: Db, company: CompanyRow, include: Include): Promise<PackageModel> {
  const id = company.id;
  const agentRows = await companyRows(
    () =>
      db
        .select()
        .from(agents)
        .where(and(eq(agents.companyId, id), ne(agents.status, "terminated"))),
    include.agents,
  );
  const goalRows = await companyRows(
    () => db.select().from(goals).where(eq(goals.companyId, id)),
    include.company,
  );
  const projectRows = await companyRows(
    () => db.select().from(projects).where(eq(projects.companyId, id)),
    include.projects,
  );
  const routineRows = await companyRows(
    () => db.select().from(routines).where(eq(routines.companyId, id)),
    include.projects && include.agents,
  );
  const issueRows = await companyRows(
    () => db.select().from(issues).where(eq(issues.companyId, id)).orderBy(asc(issues.issueNumber)),
    include.issues,
  );
  const agentSlugs = assignSlugs(agentRows, (row) => row.name, "agent");
  const goalSlugs = assignSlugs(goalRows, (row) => row.title, "goal");
  const projectSlugs = assignSlugs(projectRows, (row) => row.name, "project");
  const taskSlugs = new Map(issueRows.map((row) => [row.id, row.identifier.toLowerCase()]));
  const envInputs: PackageModel["envInputs"] = [];
  const agentModels = byAge(agentRows).map((row) => agentModel(row, agentSlugs, envInputs));
  const skillRows = include.company || include.agents ? await skillsOf(db, id) : [];
  return {
    company: {
      slug: uniqueSlug(company.name, "company", new Set()),
      name: company.name,
      description: include.company ? company.description : null,
      brandColor: company.brandColor,
      budgetMonthlyCents: company.budgetMonthlyCents,
      requireBoardApprovalForNewAgents: company.requireBoardApprovalForNewAgents,
    },
    agents: agentModels,
    goals: byAge(goalRows).map((row) => goalModel(row, goalSlugs, agentSlugs)),
    projects: await projectModels(db, projectRows, projectSlugs, goalSlugs, agentSlugs),
    routines: await routineModels(db, routineRows, agentSlugs, projectSlugs),
    tasks: await taskModels(db, issueRows, {
      tasks: taskSlugs,
      agents: agentSlugs,
      projects: projectSlugs,
      goals: goalSlugs,
    }),
    skills: skillModels(skillRows, { agents: agentModels }, include),
    envInputs,
  };
}
