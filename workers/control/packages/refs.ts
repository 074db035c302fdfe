import { ApiError, badRequest } from "../../http/errors";
import { parseSchedule } from "../routines";
import { EXTENSION_PATH, type PackageModel } from "./model";

/**
 * Every slug a package refers to must exist in the package, reporting lines, goal parents and task
 * parents must not loop, and schedules must parse: a package that fails here is a 400 before any write.
 */

type Lookup = Set<string>;

function known(where: string, what: string, set: Lookup, slug: string | null): void {
  if (slug !== null && !set.has(slug))
    throw badRequest(`${EXTENSION_PATH}: ${where}: unknown ${what} "${slug}"`);
}

/** A parent chain that comes back to where it started. */
function assertNoCycle(what: string, parents: Map<string, string | null>): void {
  for (const start of parents.keys()) {
    const seen = new Set<string>([start]);
    for (let at = parents.get(start) ?? null; at !== null; at = parents.get(at) ?? null) {
      if (seen.has(at)) throw badRequest(`${EXTENSION_PATH}: ${what} form a cycle through "${start}"`);
      seen.add(at);
    }
  }
}

function checkSchedule(where: string, cronExpression: string, timezone: string): void {
  try {
    parseSchedule(cronExpression, timezone);
  } catch (error) {
    const detail = error instanceof ApiError ? (error.detail ?? error.message) : String(error);
    throw badRequest(`${EXTENSION_PATH}: ${where}: ${detail}`);
  }
}

function checkRoutines(model: PackageModel, agents: Lookup, projects: Lookup): void {
  for (const routine of model.routines) {
    const where = `routines.${routine.slug}`;
    known(`${where}.assignee`, "agent", agents, routine.assignee);
    known(`${where}.project`, "project", projects, routine.project);
    routine.triggers.forEach((trigger, index) => {
      if (trigger.kind === "schedule")
        checkSchedule(`${where}.triggers.${index}`, trigger.cronExpression, trigger.timezone ?? "UTC");
    });
  }
}

function checkTasks(
  model: PackageModel,
  sets: Record<"agents" | "projects" | "goals" | "tasks", Lookup>,
): void {
  for (const task of model.tasks) {
    const where = `tasks.${task.slug}`;
    known(`${where}.parent`, "task", sets.tasks, task.parent);
    known(`${where}.project`, "project", sets.projects, task.project);
    known(`${where}.goal`, "goal", sets.goals, task.goal);
    known(`${where}.assignee`, "agent", sets.agents, task.assignee);
    task.comments.forEach((comment, index) => {
      if (comment.author !== "board")
        known(`${where}.comments.${index}.author`, "agent", sets.agents, comment.author);
    });
  }
  assertNoCycle("task parents", new Map(model.tasks.map((task) => [task.slug, task.parent])));
}

export function checkReferences(model: PackageModel): void {
  const agents = new Set(model.agents.map((agent) => agent.slug));
  const goals = new Set(model.goals.map((goal) => goal.slug));
  const projects = new Set(model.projects.map((project) => project.slug));
  const tasks = new Set(model.tasks.map((task) => task.slug));
  for (const agent of model.agents) known(`agents.${agent.slug}.reportsTo`, "agent", agents, agent.reportsTo);
  assertNoCycle("reporting lines", new Map(model.agents.map((agent) => [agent.slug, agent.reportsTo])));
  for (const goal of model.goals) {
    known(`goals.${goal.slug}.parent`, "goal", goals, goal.parent);
    known(`goals.${goal.slug}.owner`, "agent", agents, goal.owner);
  }
  assertNoCycle("goal parents", new Map(model.goals.map((goal) => [goal.slug, goal.parent])));
  for (const project of model.projects) {
    for (const [index, goal] of project.goals.entries())
      known(`projects.${project.slug}.goals.${index}`, "goal", goals, goal);
    known(`projects.${project.slug}.lead`, "agent", agents, project.lead);
  }
  checkRoutines(model, agents, projects);
  checkTasks(model, { agents, projects, goals, tasks });
}
