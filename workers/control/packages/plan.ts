import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { agents, companySkills, goals, issues, projects, routines } from "../../db/schema";
import type { CollisionStrategy, Include, PackageModel, PlanEntry } from "./model";

export type { Action, CollisionStrategy, PlanEntry } from "./model";

import { narrowSkills, planSkills } from "./skills";

/**
 * What an import will do, decided before anything is written: per entity create, rename or skip.
 * Preview returns this plan; apply computes it again the same way and executes exactly it.
 */

export interface ImportPlan {
  company: PlanEntry;
  agents: PlanEntry[];
  projects: PlanEntry[];
  goals: PlanEntry[];
  issues: PlanEntry[];
  routines: PlanEntry[];
  /** By canonical key (`name`); a rename gives the skill a new key (`as`). */
  skills: PlanEntry[];
}
export type ImportTarget =
  | { mode: "existing_company"; companyId: string }
  | { mode: "new_company"; newCompanyName: string };

/** Names already taken in the target company (lower-cased) → the id that holds each. */
export interface Existing {
  /** The target company has a CEO that is not terminated (there can be only one). */
  hasLiveCeo: boolean;
  agents: Map<string, string>;
  projects: Map<string, string>;
  goals: Map<string, string>;
  issues: Map<string, string>;
  routines: Map<string, string>;
  /** Skills by canonical key (not by name: agents reference them by key). */
  skills: Map<string, string>;
}

const emptyExisting = (): Existing => ({
  hasLiveCeo: false,
  agents: new Map(),
  projects: new Map(),
  goals: new Map(),
  issues: new Map(),
  routines: new Map(),
  skills: new Map(),
});

const keyed = (rows: Array<{ id: string; name: string }>) =>
  new Map(rows.map((row) => [row.name.toLowerCase(), row.id]));

export async function loadExisting(db: Db, target: ImportTarget): Promise<Existing> {
  if (target.mode === "new_company") return emptyExisting();
  const id = target.companyId;
  const [agentRows, projectRows, goalRows, issueRows, routineRows, skillRows] = await Promise.all([
    db
      .select({ id: agents.id, name: agents.name, role: agents.role, status: agents.status })
      .from(agents)
      .where(eq(agents.companyId, id)),
    db.select({ id: projects.id, name: projects.name }).from(projects).where(eq(projects.companyId, id)),
    db.select({ id: goals.id, name: goals.title }).from(goals).where(eq(goals.companyId, id)),
    db.select({ id: issues.id, name: issues.title }).from(issues).where(eq(issues.companyId, id)),
    db.select({ id: routines.id, name: routines.title }).from(routines).where(eq(routines.companyId, id)),
    db
      .select({ id: companySkills.id, name: companySkills.key })
      .from(companySkills)
      .where(eq(companySkills.companyId, id)),
  ]);
  return {
    hasLiveCeo: agentRows.some((row) => row.role === "ceo" && row.status !== "terminated"),
    agents: keyed(agentRows),
    projects: keyed(projectRows),
    goals: keyed(goalRows),
    issues: keyed(issueRows),
    routines: keyed(routineRows),
    skills: keyed(skillRows),
  };
}

/** "Name", then "Name (2)", "Name (3)", …: the first not taken (case-insensitively). */
function renamed(name: string, taken: Map<string, string>): string {
  for (let n = 2; ; n++) {
    const candidate = `${name} (${n})`;
    if (!taken.has(candidate.toLowerCase())) return candidate;
  }
}

/**
 * One kind's entries. A collision with an existing row is skipped (and references then point at the
 * existing row) or renamed; names within the package are unique among themselves the same way.
 */
function planKind(
  items: Array<{ slug: string; name: string }>,
  taken: Map<string, string>,
  strategy: CollisionStrategy,
): PlanEntry[] {
  const names = new Map(taken);
  return items.map(({ slug, name }) => {
    const key = name.toLowerCase();
    if (!names.has(key)) {
      names.set(key, slug);
      return { action: "create", slug, name };
    }
    if (strategy === "skip" && taken.has(key)) return { action: "skip", slug, name };
    const as = renamed(name, names);
    names.set(as.toLowerCase(), slug);
    return { action: "rename", slug, name, as };
  });
}

/** The model narrowed to `include`: dropped kinds vanish and references to them become null. */
export function narrowModel(model: PackageModel, include: Include, warnings: string[]): PackageModel {
  const agentsKept = include.agents ? model.agents : [];
  const projectsKept = include.projects ? model.projects : [];
  const goalsKept = include.company ? model.goals : [];
  const agentSet = new Set(agentsKept.map((agent) => agent.slug));
  const projectSet = new Set(projectsKept.map((project) => project.slug));
  const goalSet = new Set(goalsKept.map((goal) => goal.slug));
  const keep = (set: Set<string>, slug: string | null) => (slug !== null && set.has(slug) ? slug : null);
  const routinesKept = model.routines.filter(
    (routine) => agentSet.has(routine.assignee) && projectSet.has(routine.project),
  );
  if (routinesKept.length < model.routines.length)
    warnings.push(
      `${model.routines.length - routinesKept.length} routine(s) not imported: their agent or project is excluded`,
    );
  return {
    ...model,
    agents: agentsKept,
    goals: goalsKept.map((goal) => ({ ...goal, owner: keep(agentSet, goal.owner) })),
    projects: projectsKept.map((project) => ({
      ...project,
      goals: project.goals.filter((goal) => goalSet.has(goal)),
      lead: keep(agentSet, project.lead),
    })),
    routines: routinesKept,
    tasks: (include.issues ? model.tasks : []).map((task) => ({
      ...task,
      project: keep(projectSet, task.project),
      goal: keep(goalSet, task.goal),
      assignee: keep(agentSet, task.assignee),
      comments: task.comments.map((comment) => ({
        ...comment,
        author: keep(agentSet, comment.author) ?? "board",
      })),
    })),
    skills: narrowSkills(model, include, agentsKept),
    envInputs: model.envInputs.filter((input) => agentSet.has(input.agent)),
  };
}

/**
 * A company has one CEO. Importing a package's CEO into a company that already has one would break
 * that, so the package's CEO comes in as a `general` agent (its reports keep reporting to it), and
 * the preview says so.
 */
export function yieldToExistingCeo(
  model: PackageModel,
  existing: Existing,
  warnings: string[],
): PackageModel {
  if (!existing.hasLiveCeo || !model.agents.some((agent) => agent.role === "ceo")) return model;
  return {
    ...model,
    agents: model.agents.map((agent) => {
      if (agent.role !== "ceo") return agent;
      warnings.push(
        `Agent "${agent.name}" is the package's CEO; the company already has one, so it is imported with role general`,
      );
      return { ...agent, role: "general" as const };
    }),
  };
}

export function buildPlan(
  model: PackageModel,
  target: ImportTarget,
  existing: Existing,
  strategy: CollisionStrategy,
): ImportPlan {
  const company: PlanEntry =
    target.mode === "new_company"
      ? { action: "create", slug: model.company.slug, name: target.newCompanyName }
      : { action: "skip", slug: model.company.slug, name: model.company.name };
  return {
    company,
    agents: planKind(model.agents, existing.agents, strategy),
    projects: planKind(model.projects, existing.projects, strategy),
    goals: planKind(
      model.goals.map((goal) => ({ slug: goal.slug, name: goal.title })),
      existing.goals,
      strategy,
    ),
    issues: planKind(
      model.tasks.map((task) => ({ slug: task.slug, name: task.title })),
      existing.issues,
      strategy,
    ),
    routines: planKind(
      model.routines.map((routine) => ({ slug: routine.slug, name: routine.title })),
      existing.routines,
      strategy,
    ),
    skills: planSkills(model.skills, existing.skills, strategy),
  };
}

/** What the receiver must supply by hand: stripped secrets, and new webhook signing secrets. */
export function requiredInputs(model: PackageModel, plan: ImportPlan) {
  const created = (entries: PlanEntry[]) =>
    new Set(entries.filter((e) => e.action !== "skip").map((e) => e.slug));
  const agentsCreated = created(plan.agents);
  const routinesCreated = created(plan.routines);
  return [
    ...model.envInputs
      .filter((input) => agentsCreated.has(input.agent))
      .map((input) => ({ kind: "agent_env" as const, agent: input.agent, name: input.name })),
    ...model.routines
      .filter((routine) => routinesCreated.has(routine.slug))
      .flatMap((routine) =>
        routine.triggers
          .map((trigger, index) => ({ trigger, index }))
          .filter(({ trigger }) => trigger.kind === "webhook")
          .map(({ index }) => ({
            kind: "webhook_secret" as const,
            routine: routine.slug,
            trigger: index,
            name: "rotate the trigger's secret (POST /routine-triggers/{id}/rotate-secret) to obtain it",
          })),
      ),
  ];
}
