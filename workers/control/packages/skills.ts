import type { Db } from "../../db/client";
import { newId } from "../../db/client";
import { companySkills } from "../../db/schema";
import { badRequest } from "../../http/errors";
import { DEFAULT_SKILL_NAMESPACE, type SkillRow } from "../agents";
import type { Statement } from "../issues";
import { activityInsert } from "../shared";
import { frontString, parseMarkdown, proseOf, renderMarkdown } from "./markdown";
import {
  type CollisionStrategy,
  EXTENSION_PATH,
  type Extension,
  type Include,
  type PackageModel,
  type PkgSkill,
  type PlanEntry,
  uniqueSlug,
} from "./model";

/**
 * Company skills in a package: `skills/<slug>/SKILL.md` (frontmatter name and description, the body
 * the skill's text) and, in the extension, the skill's canonical key when it is not
 * `company/<slug>`. Agents' desiredSkills name skills by key, so an import keeps keys (a collision
 * renames the key, and the agents' references follow) and drops references it cannot satisfy.
 */

export const SKILL_KEY = /^[a-z0-9][a-z0-9_-]{0,63}\/[a-z0-9][a-z0-9-]{0,63}$/;
const namespaceOf = (key: string) => key.slice(0, key.indexOf("/"));
const slugOfKey = (key: string) => key.slice(key.indexOf("/") + 1);

/** Export: all the company's skills with the company, else those the exported agents want. */
export function skillModels(
  rows: SkillRow[],
  model: Pick<PackageModel, "agents">,
  include: Include,
): PkgSkill[] {
  const wanted = new Set(model.agents.flatMap((agent) => agent.desiredSkills));
  const taken = new Set<string>();
  return [...rows]
    .filter((row) => include.company || wanted.has(row.key))
    .sort((a, b) => a.key.localeCompare(b.key))
    .map((row) => {
      const namespace = namespaceOf(row.key);
      const label = namespace === DEFAULT_SKILL_NAMESPACE ? row.slug : `${namespace}-${row.slug}`;
      return {
        slug: uniqueSlug(label, "skill", taken),
        key: row.key,
        name: row.name,
        description: row.description,
        content: row.content ?? "",
      };
    });
}

export function skillFiles(skills: PkgSkill[]): Record<string, string> {
  return Object.fromEntries(
    skills.map((skill) => [
      `skills/${skill.slug}/SKILL.md`,
      renderMarkdown({ name: skill.name, description: skill.description ?? undefined }, skill.content),
    ]),
  );
}

/** The extension's entries: only keys that the directory name does not already say. */
export function skillExtension(skills: PkgSkill[]): Extension["skills"] {
  const entries = skills.filter((skill) => skill.key !== `${DEFAULT_SKILL_NAMESPACE}/${skill.slug}`);
  return entries.length > 0
    ? Object.fromEntries(entries.map((skill) => [skill.slug, { key: skill.key }]))
    : undefined;
}

/** Parse: one skill from its SKILL.md and extension entry. */
export function skillOf(slug: string, files: Record<string, string>, ext: Extension): PkgSkill {
  const path = `skills/${slug}/SKILL.md`;
  const { front, body } = parseMarkdown(path, files[path] ?? "");
  const key = ext.skills?.[slug]?.key ?? `${DEFAULT_SKILL_NAMESPACE}/${slug}`;
  if (!SKILL_KEY.test(key))
    throw badRequest(`${EXTENSION_PATH}: skills.${slug}.key: "${key}" is not <namespace>/<slug>`);
  return {
    slug,
    key,
    name: frontString(path, front, "name") ?? slug,
    description: proseOf(frontString(path, front, "description") ?? ""),
    content: body,
  };
}

/** An agent's reference to a package skill (its key, directory name or key's slug) as that skill's key. */
export function canonicalSkillRefs(model: PackageModel): PackageModel {
  const keys = model.skills.map((skill) => skill.key);
  const twice = keys.find((key, index) => keys.indexOf(key) !== index);
  if (twice) throw badRequest(`${EXTENSION_PATH}: two skills have the key "${twice}"`);
  const keyOf = (ref: string) => {
    const wanted = ref.toLowerCase();
    const skill =
      model.skills.find((item) => item.key === wanted || item.slug === wanted) ??
      model.skills.find((item) => slugOfKey(item.key) === wanted);
    return skill?.key ?? ref;
  };
  return {
    ...model,
    agents: model.agents.map((agent) => ({
      ...agent,
      desiredSkills: [...new Set(agent.desiredSkills.map(keyOf))],
    })),
  };
}

/** Import narrowing: all the package's skills with the company, else those the imported agents want. */
export function narrowSkills(
  model: PackageModel,
  include: Include,
  agents: PackageModel["agents"],
): PkgSkill[] {
  if (include.company) return model.skills;
  const wanted = new Set(agents.flatMap((agent) => agent.desiredSkills));
  return model.skills.filter((skill) => wanted.has(skill.key));
}

/** `ns/slug` taken: `ns/slug-2`, `ns/slug-3`, … the first free one. */
function renamedKey(key: string, taken: Set<string>): string {
  for (let n = 2; ; n++) {
    const candidate = `${key.slice(0, 60)}-${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** Plan entries by key (what agents reference): create, skip (reuse the company's) or rename the key. */
export function planSkills(
  skills: PkgSkill[],
  existing: Map<string, string>,
  strategy: CollisionStrategy,
): PlanEntry[] {
  const taken = new Set(existing.keys());
  return skills.map(({ slug, key }) => {
    if (!taken.has(key)) {
      taken.add(key);
      return { action: "create", slug, name: key };
    }
    if (strategy === "skip" && existing.has(key)) return { action: "skip", slug, name: key };
    const as = renamedKey(key, taken);
    taken.add(as);
    return { action: "rename", slug, name: key, as };
  });
}

/**
 * Agents' desiredSkills as the target company will hold them: a package skill's final key (renamed
 * or not), a key the company already has, and nothing else (a warning names each dropped one).
 */
export function finalSkillRefs(
  model: PackageModel,
  entries: PlanEntry[],
  existing: Map<string, string>,
  warnings: string[],
): PackageModel {
  const finalKey = new Map(entries.map((entry) => [entry.name, entry.as ?? entry.name]));
  return {
    ...model,
    agents: model.agents.map((agent) => ({
      ...agent,
      desiredSkills: agent.desiredSkills.flatMap((ref) => {
        const key = finalKey.get(ref) ?? (existing.has(ref) ? ref : undefined);
        if (key) return [key];
        warnings.push(
          `Agent "${agent.name}" wants the skill "${ref}", which neither the package nor the company has; it is left out`,
        );
        return [];
      }),
    })),
  };
}

export interface SkillContext {
  db: Db;
  companyId: string;
  actor: Parameters<typeof activityInsert>[1]["actor"];
  now: number;
}

export function skillStatements(ctx: SkillContext, model: PackageModel, entries: PlanEntry[]): Statement[] {
  return entries
    .filter((entry) => entry.action !== "skip")
    .flatMap((entry) => {
      const skill = model.skills.find((item) => item.slug === entry.slug);
      if (!skill) return [];
      const id = newId();
      const key = entry.as ?? entry.name;
      return [
        ctx.db.insert(companySkills).values({
          id,
          companyId: ctx.companyId,
          key,
          slug: slugOfKey(key),
          name: skill.name,
          description: skill.description,
          content: skill.content,
          source: "package",
          createdAt: ctx.now,
          updatedAt: ctx.now,
        }),
        activityInsert(
          ctx.db,
          {
            companyId: ctx.companyId,
            actor: ctx.actor,
            action: "skill.created",
            entityType: "skill",
            entityId: id,
            details: { key, source: "import" },
          },
          ctx.now,
        ),
      ];
    });
}
