import { ADAPTER_TYPES, AGENT_ROLES } from "../../db/control-schema";
import { ApiError, badRequest } from "../../http/errors";
import { frontString, parseMarkdown, parseYamlMapping, proseOf } from "./markdown";
import {
  EXTENSION_PATH,
  type Extension,
  ExtensionSchema,
  type PackageModel,
  type PkgAgent,
  type PkgDocument,
  type PkgProject,
  type PkgTask,
  SLUG,
  slugify,
} from "./model";
import { checkReferences } from "./refs";
import { canonicalSkillRefs, skillOf } from "./skills";

/**
 * Files → PackageModel, or a 400 naming the file and field. Entities are the union of their markdown
 * files and their `.switchboard.yaml` entries; an entry whose markdown file is missing is an error, a
 * file without an entry gets defaults. Files outside the layout are ignored with a warning.
 */

type Files = Record<string, string>;

const ENTITY_FILE = /^(agents|projects|tasks|skills)\/([^/]+)\/(AGENTS|PROJECT|TASK|SKILL)\.md$/;
const DOCUMENT_FILE = /^tasks\/([^/]+)\/documents\/([^/]+)\.md$/;
const FILE_OF = {
  agents: "AGENTS.md",
  projects: "PROJECT.md",
  tasks: "TASK.md",
  skills: "SKILL.md",
} as const;
type Kind = keyof typeof FILE_OF;

interface Layout {
  slugs: Record<Kind, string[]>;
  documents: Map<string, string[]>;
  warnings: string[];
}

function assertSlug(path: string, slug: string): void {
  if (!SLUG.test(slug))
    throw badRequest(`${path}: "${slug}" is not a slug (lower-case letters, digits, dashes)`);
}

/** Which entity directories and documents the files contain. */
function scanLayout(files: Files): Layout {
  const layout: Layout = {
    slugs: { agents: [], projects: [], tasks: [], skills: [] },
    documents: new Map(),
    warnings: [],
  };
  for (const path of Object.keys(files).sort()) {
    const [, kind = "", slug = "", file = ""] = ENTITY_FILE.exec(path) ?? [];
    const [, taskSlug = "", key = ""] = DOCUMENT_FILE.exec(path) ?? [];
    if (slug && FILE_OF[kind as Kind] === `${file}.md`) {
      assertSlug(path, slug);
      layout.slugs[kind as Kind].push(slug);
    } else if (taskSlug) {
      assertSlug(path, taskSlug);
      assertSlug(path, key);
      layout.documents.set(taskSlug, [...(layout.documents.get(taskSlug) ?? []), key]);
    } else if (path !== "COMPANY.md" && path !== EXTENSION_PATH) {
      layout.warnings.push(`${path}: not part of the package layout, ignored`);
    }
  }
  return layout;
}

function readExtension(files: Files): Extension {
  const text = files[EXTENSION_PATH];
  if (text === undefined) return { schema: "switchboard/v1" };
  const parsed = ExtensionSchema.safeParse(parseYamlMapping(EXTENSION_PATH, text));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw badRequest(`${EXTENSION_PATH}: ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`);
}

/** Slugs from the files plus those only the extension names (which must then have their file). */
function entitySlugs(
  kind: Kind,
  layout: Layout,
  listed: Record<string, unknown> | undefined,
  files: Files,
): string[] {
  const slugs = [...layout.slugs[kind]];
  for (const slug of Object.keys(listed ?? {})) {
    const path = `${kind}/${slug}/${FILE_OF[kind]}`;
    if (files[path] === undefined)
      throw badRequest(`${EXTENSION_PATH} lists ${kind}.${slug} but ${path} is missing`);
  }
  return slugs;
}

function oneOf<T extends string>(path: string, value: string | null, allowed: readonly T[]): T | undefined {
  if (value === null) return undefined;
  if (!(allowed as readonly string[]).includes(value))
    throw badRequest(`${path}: "${value}" is not one of ${allowed.join(", ")}`);
  return value as T;
}

function agentOf(slug: string, files: Files, ext: Extension): PkgAgent {
  const path = `agents/${slug}/AGENTS.md`;
  const { front, body } = parseMarkdown(path, files[path] ?? "");
  const entry = ext.agents?.[slug] ?? {};
  const config = entry.adapterConfig ?? {};
  return {
    slug,
    name: entry.name ?? frontString(path, front, "name") ?? slug,
    role: entry.role ?? oneOf(path, frontString(path, front, "role"), AGENT_ROLES) ?? "general",
    title: entry.title ?? frontString(path, front, "title"),
    icon: entry.icon ?? null,
    capabilities: entry.capabilities ?? null,
    reportsTo: entry.reportsTo ?? null,
    adapterType:
      entry.adapterType ??
      oneOf(path, frontString(path, front, "adapterType"), ADAPTER_TYPES) ??
      "coder_local",
    adapterConfig: config,
    runtimeConfig: entry.runtimeConfig ?? {},
    desiredSkills: entry.desiredSkills ?? [],
    budgetMonthlyCents: entry.budgetMonthlyCents ?? 0,
    instructions: body,
  };
}

function projectOf(slug: string, files: Files, ext: Extension): PkgProject {
  const path = `projects/${slug}/PROJECT.md`;
  const { front, body } = parseMarkdown(path, files[path] ?? "");
  const entry = ext.projects?.[slug] ?? {};
  return {
    slug,
    name: frontString(path, front, "name") ?? slug,
    description: proseOf(body),
    status: entry.status ?? "active",
    goals: entry.goals ?? [],
    lead: entry.lead ?? null,
    workspaces: (entry.workspaces ?? []).map((space, index) => ({
      name: space.name,
      cwd: space.cwd ?? null,
      repoUrl: space.repoUrl ?? null,
      repoRef: space.repoRef ?? null,
      isPrimary: space.isPrimary ?? index === 0,
    })),
  };
}

function documentsOf(slug: string, files: Files, listed: string[], found: string[]): PkgDocument[] {
  for (const key of listed) {
    const path = `tasks/${slug}/documents/${key}.md`;
    if (files[path] === undefined)
      throw badRequest(`${EXTENSION_PATH} lists document ${key} of tasks.${slug} but ${path} is missing`);
  }
  return [...new Set([...listed, ...found])].sort().map((key) => {
    const path = `tasks/${slug}/documents/${key}.md`;
    const { front, body } = parseMarkdown(path, files[path] ?? "");
    return { key, title: frontString(path, front, "title"), body };
  });
}

function taskOf(slug: string, files: Files, ext: Extension, layout: Layout): PkgTask {
  const path = `tasks/${slug}/TASK.md`;
  const { front, body } = parseMarkdown(path, files[path] ?? "");
  const entry = ext.tasks?.[slug] ?? {};
  const assignee = entry.assignee !== undefined ? entry.assignee : frontString(path, front, "assignee");
  return {
    slug,
    identifier: entry.identifier ?? null,
    title: frontString(path, front, "name") ?? frontString(path, front, "title") ?? slug,
    description: proseOf(body),
    status: entry.status ?? (assignee ? "todo" : "backlog"),
    priority: entry.priority ?? "medium",
    parent: entry.parent ?? null,
    project: entry.project ?? null,
    goal: entry.goal ?? null,
    assignee: assignee ?? null,
    dueDate: entry.dueDate ?? null,
    labels: entry.labels ?? [],
    comments: entry.comments ?? [],
    documents: documentsOf(slug, files, entry.documents ?? [], layout.documents.get(slug) ?? []),
  };
}

function companyOf(files: Files, ext: Extension): PackageModel["company"] {
  const text = files["COMPANY.md"];
  if (text === undefined) throw badRequest("COMPANY.md is missing: every package starts with it");
  const { front, body } = parseMarkdown("COMPANY.md", text);
  const name = frontString("COMPANY.md", front, "name");
  if (!name) throw badRequest('COMPANY.md: frontmatter field "name" is required');
  return {
    slug: frontString("COMPANY.md", front, "slug") ?? slugify(name, "company"),
    name,
    description: proseOf(body),
    brandColor: ext.company?.brandColor ?? null,
    budgetMonthlyCents: ext.company?.budgetMonthlyCents ?? 0,
    requireBoardApprovalForNewAgents: ext.company?.requireBoardApprovalForNewAgents ?? true,
  };
}

export interface ParsedPackage {
  model: PackageModel;
  warnings: string[];
}

/** The whole package, validated; throws a 400 (ApiError) on the first problem found. */
export function parsePackage(files: Files): ParsedPackage {
  try {
    const ext = readExtension(files);
    const layout = scanLayout(files);
    const company = companyOf(files, ext);
    const model: PackageModel = {
      company,
      agents: entitySlugs("agents", layout, ext.agents, files).map((slug) => agentOf(slug, files, ext)),
      goals: Object.entries(ext.goals ?? {}).map(([slug, goal]) => ({
        slug,
        title: goal.title,
        description: goal.description ?? null,
        level: goal.level ?? (goal.parent ? "team" : "company"),
        status: goal.status ?? "active",
        parent: goal.parent ?? null,
        owner: goal.owner ?? null,
      })),
      projects: entitySlugs("projects", layout, ext.projects, files).map((slug) =>
        projectOf(slug, files, ext),
      ),
      routines: Object.entries(ext.routines ?? {}).map(([slug, routine]) => ({
        slug,
        title: routine.title,
        description: routine.description ?? null,
        assignee: routine.assignee,
        project: routine.project,
        priority: routine.priority ?? "medium",
        status: routine.status ?? "active",
        concurrencyPolicy: routine.concurrencyPolicy ?? "coalesce_if_active",
        catchUpPolicy: routine.catchUpPolicy ?? "skip_missed",
        triggers: routine.triggers ?? [],
      })),
      tasks: entitySlugs("tasks", layout, ext.tasks, files).map((slug) => taskOf(slug, files, ext, layout)),
      skills: entitySlugs("skills", layout, ext.skills, files).map((slug) => skillOf(slug, files, ext)),
      envInputs: Object.entries(ext.agents ?? {}).flatMap(([agent, entry]) =>
        (entry?.envInputs ?? []).map((name) => ({ agent, name })),
      ),
    };
    checkReferences(model);
    return { model: canonicalSkillRefs(model), warnings: layout.warnings };
  } catch (error) {
    // Anything unexpected while reading a package is still the package's fault, never a 500.
    if (error instanceof ApiError) throw error;
    throw badRequest(`Malformed package: ${error instanceof Error ? error.message : String(error)}`);
  }
}
