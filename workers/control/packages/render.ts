import { stringify } from "yaml";
import { renderMarkdown } from "./markdown";
import {
  EXTENSION_PATH,
  EXTENSION_SCHEMA,
  type Extension,
  type Include,
  PACKAGE_SCHEMA,
  type PackageModel,
  type PkgAgent,
  type PkgRoutine,
  type PkgTask,
} from "./model";
import { skillExtension, skillFiles } from "./skills";

/** PackageModel → files (path → text) and the manifest that describes them. */

export type Files = Record<string, string>;

export interface Manifest {
  schema: typeof PACKAGE_SCHEMA;
  extension: typeof EXTENSION_PATH;
  rootPath: string;
  counts: Record<
    "agents" | "goals" | "projects" | "routines" | "tasks" | "comments" | "documents" | "skills",
    number
  >;
  files: string[];
  envInputs: Array<{ agent: string; name: string }>;
  include: Include;
}

const agentExtension = (agent: PkgAgent, envInputs: string[]) => ({
  role: agent.role,
  title: agent.title,
  icon: agent.icon,
  capabilities: agent.capabilities,
  reportsTo: agent.reportsTo,
  adapterType: agent.adapterType,
  adapterConfig: agent.adapterConfig,
  runtimeConfig: agent.runtimeConfig,
  desiredSkills: agent.desiredSkills,
  budgetMonthlyCents: agent.budgetMonthlyCents,
  envInputs: envInputs.length > 0 ? envInputs : undefined,
});

const routineExtension = (routine: PkgRoutine) => ({
  title: routine.title,
  description: routine.description,
  assignee: routine.assignee,
  project: routine.project,
  priority: routine.priority,
  status: routine.status,
  concurrencyPolicy: routine.concurrencyPolicy,
  catchUpPolicy: routine.catchUpPolicy,
  triggers: routine.triggers,
});

const taskExtension = (task: PkgTask) => ({
  identifier: task.identifier ?? undefined,
  status: task.status,
  priority: task.priority,
  parent: task.parent,
  project: task.project,
  goal: task.goal,
  assignee: task.assignee,
  ...(task.dueDate ? { dueDate: task.dueDate } : {}),
  ...(task.labels.length > 0 ? { labels: task.labels } : {}),
  comments: task.comments,
  documents: task.documents.map((document) => document.key),
});

/** Entries keyed by slug, in the model's order (YAML keeps insertion order). */
const bySlug = <T extends { slug: string }, R>(items: T[], render: (item: T) => R): Record<string, R> =>
  Object.fromEntries(items.map((item) => [item.slug, render(item)]));

export function renderExtension(model: PackageModel): Extension {
  const { company } = model;
  return {
    schema: EXTENSION_SCHEMA,
    company: {
      brandColor: company.brandColor,
      budgetMonthlyCents: company.budgetMonthlyCents,
      requireBoardApprovalForNewAgents: company.requireBoardApprovalForNewAgents,
    },
    agents: bySlug(model.agents, (agent) =>
      agentExtension(
        agent,
        model.envInputs.filter((input) => input.agent === agent.slug).map((input) => input.name),
      ),
    ),
    goals: bySlug(model.goals, ({ slug: _slug, ...goal }) => goal),
    projects: bySlug(model.projects, (project) => ({
      status: project.status,
      goals: project.goals,
      lead: project.lead,
      workspaces: project.workspaces,
    })),
    routines: bySlug(model.routines, routineExtension),
    tasks: bySlug(model.tasks, taskExtension),
    skills: skillExtension(model.skills),
  };
}

function taskFiles(task: PkgTask, files: Files): void {
  files[`tasks/${task.slug}/TASK.md`] = renderMarkdown(
    { name: task.title, assignee: task.assignee ?? undefined, recurring: false },
    task.description ? `${task.description}\n` : "",
  );
  for (const document of task.documents) {
    files[`tasks/${task.slug}/documents/${document.key}.md`] = renderMarkdown(
      { key: document.key, title: document.title ?? undefined },
      document.body,
    );
  }
}

/** Every file of the package; the company file and the extension are always there. */
export function renderFiles(model: PackageModel): Files {
  const files: Files = {};
  const { company } = model;
  files["COMPANY.md"] = renderMarkdown(
    { name: company.name, schema: PACKAGE_SCHEMA, slug: company.slug },
    company.description ? `${company.description}\n` : "",
  );
  for (const agent of model.agents) {
    files[`agents/${agent.slug}/AGENTS.md`] = renderMarkdown(
      { name: agent.name, role: agent.role, title: agent.title ?? undefined },
      agent.instructions,
    );
  }
  for (const project of model.projects) {
    files[`projects/${project.slug}/PROJECT.md`] = renderMarkdown(
      { name: project.name },
      project.description ? `${project.description}\n` : "",
    );
  }
  for (const task of model.tasks) taskFiles(task, files);
  Object.assign(files, skillFiles(model.skills));
  files[EXTENSION_PATH] = stringify(renderExtension(model));
  return files;
}

export function buildManifest(model: PackageModel, files: Files, rootPath: string, include: Include) {
  const manifest: Manifest = {
    schema: PACKAGE_SCHEMA,
    extension: EXTENSION_PATH,
    rootPath,
    counts: {
      agents: model.agents.length,
      goals: model.goals.length,
      projects: model.projects.length,
      routines: model.routines.length,
      tasks: model.tasks.length,
      comments: model.tasks.reduce((sum, task) => sum + task.comments.length, 0),
      documents: model.tasks.reduce((sum, task) => sum + task.documents.length, 0),
      skills: model.skills.length,
    },
    files: Object.keys(files).sort(),
    envInputs: model.envInputs,
    include,
  };
  return manifest;
}
