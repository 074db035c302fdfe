import { asc, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { companySkills } from "../../db/schema";
import { unprocessable } from "../../http/errors";

/**
 * Company skills and the references agents use for them. An agent's desiredSkills accept a skill's
 * id, its canonical key (`<namespace>/<slug>`) or its slug when exactly one skill has it; they are
 * stored as canonical keys, so a later import of a same-slug skill cannot silently change them.
 */

export type SkillRow = typeof companySkills.$inferSelect;
export const DEFAULT_SKILL_NAMESPACE = "company";

export const skillResource = (row: SkillRow) => ({
  id: row.id,
  companyId: row.companyId,
  key: row.key,
  slug: row.slug,
  name: row.name,
  description: row.description,
  content: row.content,
  source: row.source,
  createdAt: new Date(row.createdAt).toISOString(),
  updatedAt: new Date(row.updatedAt).toISOString(),
});

export async function skillsOf(db: Db, companyId: string): Promise<SkillRow[]> {
  return db
    .select()
    .from(companySkills)
    .where(eq(companySkills.companyId, companyId))
    .orderBy(asc(companySkills.key));
}

/** "Code Review!" → "code-review": lower case, runs of anything else as one dash, at most 64 chars. */
export function slugify(name: string): string {
  return name
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64)
    .replace(/-+$/, "");
}

type Resolution = { skill: SkillRow } | { problem: "unknown" | "ambiguous"; matches?: string[] };

function resolveOne(skills: readonly SkillRow[], ref: string): Resolution {
  const byIdOrKey = skills.find((skill) => skill.id === ref || skill.key === ref.toLowerCase());
  if (byIdOrKey) return { skill: byIdOrKey };
  const bySlug = skills.filter((skill) => skill.slug === ref.toLowerCase());
  if (bySlug.length === 1 && bySlug[0]) return { skill: bySlug[0] };
  if (bySlug.length > 1) return { problem: "ambiguous", matches: bySlug.map((skill) => skill.key) };
  return { problem: "unknown" };
}

/**
 * The skills `refs` name, in order and without repeats. Any unknown or ambiguous reference fails the
 * whole request (422, listing each) so nothing is stored half-resolved.
 */
export async function resolveSkillRefs(
  db: Db,
  companyId: string,
  refs: readonly string[],
): Promise<SkillRow[]> {
  if (refs.length === 0) return [];
  const skills = await skillsOf(db, companyId);
  const resolved = new Map<string, SkillRow>();
  const unknown: string[] = [];
  const ambiguous: Array<{ ref: string; matches: string[] }> = [];
  for (const ref of refs) {
    const outcome = resolveOne(skills, ref);
    if ("skill" in outcome) resolved.set(outcome.skill.key, outcome.skill);
    else if (outcome.problem === "ambiguous") ambiguous.push({ ref, matches: outcome.matches ?? [] });
    else unknown.push(ref);
  }
  if (unknown.length > 0 || ambiguous.length > 0) {
    const parts = [
      unknown.length > 0 ? `unknown skills: ${unknown.join(", ")}` : "",
      ambiguous.length > 0
        ? `ambiguous slugs (use the canonical key): ${ambiguous.map((entry) => entry.ref).join(", ")}`
        : "",
    ].filter(Boolean);
    throw unprocessable(`desiredSkills: ${parts.join("; ")}`, { unknown, ambiguous });
  }
  return [...resolved.values()];
}

export const canonicalKeys = async (db: Db, companyId: string, refs: readonly string[]): Promise<string[]> =>
  (await resolveSkillRefs(db, companyId, refs)).map((skill) => skill.key);
