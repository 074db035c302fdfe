import { z } from "@hono/zod-openapi";
import { CATCH_UP_POLICIES, CONCURRENCY_POLICIES, ROUTINE_STATUSES } from "../../db/automation-schema";
import {
  ADAPTER_TYPES,
  AGENT_ROLES,
  GOAL_LEVELS,
  GOAL_STATUSES,
  ISSUE_PRIORITIES,
  ISSUE_STATUSES,
  PROJECT_STATUSES,
} from "../../db/control-schema";

/**
 * The company package in memory: every entity keyed by a slug, every reference a slug (never an id),
 * so a package reads the same in any instance. Export builds this from D1, the renderer turns it into
 * files; the parser turns files back into it and import plans from it.
 */

export const PACKAGE_SCHEMA = "agentcompanies/v1";
export const EXTENSION_SCHEMA = "switchboard/v1";
export const EXTENSION_PATH = ".switchboard.yaml";

/** Slugs are directory names: lower-case letters, digits and dashes, so no path can hide in one. */
export const SLUG = /^[a-z0-9][a-z0-9-]{0,63}$/;
const Slug = z.string().regex(SLUG, "must be a slug: lower-case letters, digits and dashes");
const Json = z.record(z.string(), z.unknown());
const Text = z.string().nullable().optional();

const AgentExt = z
  .strictObject({
    name: z.string().min(1).optional(),
    role: z.enum(AGENT_ROLES).optional(),
    title: Text,
    icon: Text,
    capabilities: Text,
    reportsTo: Slug.nullable().optional(),
    adapterType: z.enum(ADAPTER_TYPES).optional(),
    adapterConfig: Json.optional(),
    runtimeConfig: Json.optional(),
    desiredSkills: z.array(z.string()).optional(),
    budgetMonthlyCents: z.number().int().min(0).optional(),
    /** Secret values the export left out (env variable names or config paths) that a receiver supplies. */
    envInputs: z.array(z.string()).optional(),
  })
  .optional();

const GoalExt = z.strictObject({
  title: z.string().min(1),
  description: Text,
  level: z.enum(GOAL_LEVELS).optional(),
  status: z.enum(GOAL_STATUSES).optional(),
  parent: Slug.nullable().optional(),
  owner: Slug.nullable().optional(),
});

const WorkspaceExt = z.strictObject({
  name: z.string().min(1),
  cwd: Text,
  repoUrl: Text,
  repoRef: Text,
  isPrimary: z.boolean().optional(),
});

const ProjectExt = z
  .strictObject({
    status: z.enum(PROJECT_STATUSES).optional(),
    goals: z.array(Slug).optional(),
    lead: Slug.nullable().optional(),
    workspaces: z.array(WorkspaceExt).optional(),
  })
  .optional();

const TriggerExt = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("schedule"),
    label: Text,
    enabled: z.boolean().optional(),
    cronExpression: z.string().min(1),
    timezone: z.string().optional(),
  }),
  z.strictObject({
    kind: z.literal("webhook"),
    label: Text,
    enabled: z.boolean().optional(),
    replayWindowSec: z.number().int().min(30).max(86400).optional(),
  }),
  z.strictObject({ kind: z.literal("api"), label: Text, enabled: z.boolean().optional() }),
]);

const RoutineExt = z.strictObject({
  title: z.string().min(1).max(200),
  description: Text,
  assignee: Slug,
  project: Slug,
  priority: z.enum(ISSUE_PRIORITIES).optional(),
  status: z.enum(ROUTINE_STATUSES).optional(),
  concurrencyPolicy: z.enum(CONCURRENCY_POLICIES).optional(),
  catchUpPolicy: z.enum(CATCH_UP_POLICIES).optional(),
  triggers: z.array(TriggerExt).optional(),
});

const CommentExt = z.strictObject({ author: z.string().min(1), body: z.string() });

const TaskExt = z
  .strictObject({
    identifier: z.string().optional(),
    status: z.enum(ISSUE_STATUSES).optional(),
    priority: z.enum(ISSUE_PRIORITIES).optional(),
    parent: Slug.nullable().optional(),
    project: Slug.nullable().optional(),
    goal: Slug.nullable().optional(),
    assignee: Slug.nullable().optional(),
    dueDate: z.iso.date().nullable().optional(),
    /** Label names; the importing company's label of that name (any case), else a new one. */
    labels: z.array(z.string().trim().min(1).max(50)).max(50).optional(),
    comments: z.array(CommentExt).optional(),
    documents: z.array(z.string().regex(SLUG, "document keys must be slugs")).optional(),
  })
  .optional();

/** A skill's canonical key when it is not `company/<directory name>`. */
const SkillExt = z.strictObject({ key: z.string().min(3).max(130) }).optional();

/** `.switchboard.yaml`: the machine fields markdown does not carry. Strict, so a typo is a 400. */
export const ExtensionSchema = z.strictObject({
  schema: z.literal(EXTENSION_SCHEMA),
  company: z
    .strictObject({
      brandColor: Text,
      budgetMonthlyCents: z.number().int().min(0).optional(),
      requireBoardApprovalForNewAgents: z.boolean().optional(),
    })
    .optional(),
  agents: z.record(Slug, AgentExt).optional(),
  goals: z.record(Slug, GoalExt).optional(),
  projects: z.record(Slug, ProjectExt).optional(),
  routines: z.record(Slug, RoutineExt).optional(),
  tasks: z.record(Slug, TaskExt).optional(),
  skills: z.record(Slug, SkillExt).optional(),
});
export type Extension = z.infer<typeof ExtensionSchema>;

export type JsonMap = Record<string, unknown>;

/** An import's decision for one entity (plan.ts): create it, skip it (reuse the existing) or rename it. */
export type Action = "create" | "skip" | "rename";
export interface PlanEntry {
  action: Action;
  slug: string;
  name: string;
  as?: string;
}
export type CollisionStrategy = "rename" | "skip";

export interface PkgCompany {
  slug: string;
  name: string;
  description: string | null;
  brandColor: string | null;
  budgetMonthlyCents: number;
  requireBoardApprovalForNewAgents: boolean;
}
export interface PkgAgent {
  slug: string;
  name: string;
  role: (typeof AGENT_ROLES)[number];
  title: string | null;
  icon: string | null;
  capabilities: string | null;
  reportsTo: string | null;
  adapterType: (typeof ADAPTER_TYPES)[number];
  adapterConfig: JsonMap;
  runtimeConfig: JsonMap;
  desiredSkills: string[];
  budgetMonthlyCents: number;
  /** AGENTS.md body: the agent's instructions (adapterConfig.promptTemplate in the database). */
  instructions: string;
}
export interface PkgGoal {
  slug: string;
  title: string;
  description: string | null;
  level: (typeof GOAL_LEVELS)[number];
  status: (typeof GOAL_STATUSES)[number];
  parent: string | null;
  owner: string | null;
}
export type PkgWorkspace = {
  name: string;
  cwd: string | null;
  repoUrl: string | null;
  repoRef: string | null;
  isPrimary: boolean;
};
export interface PkgProject {
  slug: string;
  name: string;
  description: string | null;
  status: (typeof PROJECT_STATUSES)[number];
  goals: string[];
  lead: string | null;
  workspaces: PkgWorkspace[];
}
export type PkgTrigger = z.infer<typeof TriggerExt>;
export interface PkgRoutine {
  slug: string;
  title: string;
  description: string | null;
  assignee: string;
  project: string;
  priority: (typeof ISSUE_PRIORITIES)[number];
  status: (typeof ROUTINE_STATUSES)[number];
  concurrencyPolicy: (typeof CONCURRENCY_POLICIES)[number];
  catchUpPolicy: (typeof CATCH_UP_POLICIES)[number];
  triggers: PkgTrigger[];
}
export interface PkgDocument {
  key: string;
  title: string | null;
  body: string;
}
export interface PkgTask {
  slug: string;
  identifier: string | null;
  title: string;
  description: string | null;
  status: (typeof ISSUE_STATUSES)[number];
  priority: (typeof ISSUE_PRIORITIES)[number];
  parent: string | null;
  project: string | null;
  goal: string | null;
  assignee: string | null;
  /** A calendar day, YYYY-MM-DD. */
  dueDate: string | null;
  labels: string[];
  /** author: an agent slug, or "board" for a person. */
  comments: Array<{ author: string; body: string }>;
  documents: PkgDocument[];
}

/** A company skill: `skills/<slug>/SKILL.md`; agents' desiredSkills name it by `key`. */
export interface PkgSkill {
  slug: string;
  key: string;
  name: string;
  description: string | null;
  /** SKILL.md's body: the skill's text. */
  content: string;
}

export interface PackageModel {
  company: PkgCompany;
  agents: PkgAgent[];
  goals: PkgGoal[];
  projects: PkgProject[];
  routines: PkgRoutine[];
  tasks: PkgTask[];
  skills: PkgSkill[];
  /** Inputs a receiver must supply: secrets stripped from adapter configs. */
  envInputs: Array<{ agent: string; name: string }>;
}

export const IncludeSchema = z
  .strictObject({
    company: z.boolean().optional(),
    agents: z.boolean().optional(),
    projects: z.boolean().optional(),
    issues: z.boolean().optional(),
  })
  .openapi("PackageInclude");
export type IncludeInput = z.infer<typeof IncludeSchema>;
export type Include = Required<IncludeInput>;

/** Defaults: everything, except issues in an export preview (the spec: previews stay small). */
export function resolveInclude(input: IncludeInput | undefined, issuesDefault: boolean): Include {
  return {
    company: input?.company ?? true,
    agents: input?.agents ?? true,
    projects: input?.projects ?? true,
    issues: input?.issues ?? issuesDefault,
  };
}

/** "Research & Dev" → "research-dev"; empty results fall back so every entity gets a directory. */
export function slugify(text: string, fallback: string): string {
  const slug = text
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48)
    .replace(/-+$/, "");
  return slug || fallback;
}

/** slugify, made unique within `taken` by a numeric suffix (and recorded there). */
export function uniqueSlug(text: string, fallback: string, taken: Set<string>): string {
  const base = slugify(text, fallback);
  let slug = base;
  for (let n = 2; taken.has(slug); n++) slug = `${base}-${n}`;
  taken.add(slug);
  return slug;
}
