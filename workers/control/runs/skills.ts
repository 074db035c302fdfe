import {
  type RunSkill,
  SKILL_CONTENT_MAX_CHARS,
  SKILLS_MAX,
  SKILLS_TOTAL_MAX_CHARS,
} from "../../../bridge/src/protocol/runner";
import type { Db } from "../../db/client";
import type { AgentRow } from "../../db/schema";
import { PLATFORM_SKILL_SLUG, platformSkill } from "../../llms/platform-skill";
import { type SkillRow, skillsOf } from "../agents";

/**
 * The skills a run hands the agent's CLI: the platform's own first, then the agent's desired company
 * skills in the order it listed them (a key whose skill was since removed is left out). Bounded so
 * the assignment stays a small frame: a skill's text is cut at SKILL_CONTENT_MAX_CHARS, and skills
 * past SKILLS_MAX or past SKILLS_TOTAL_MAX_CHARS in all go as a pointer to the skills API instead of
 * their text.
 */
export async function runSkills(db: Db, agent: AgentRow, apiUrl: string): Promise<RunSkill[]> {
  const wanted = new Set(agent.desiredSkills);
  const rows =
    wanted.size === 0 ? [] : (await skillsOf(db, agent.companyId)).filter((row) => wanted.has(row.key));
  rows.sort((a, b) => agent.desiredSkills.indexOf(a.key) - agent.desiredSkills.indexOf(b.key));
  const skills: RunSkill[] = [platformSkill(apiUrl, { adapterType: agent.adapterType })];
  const slugs = new Set([PLATFORM_SKILL_SLUG]);
  let total = skills[0]?.content.length ?? 0;
  for (const row of rows.slice(0, SKILLS_MAX - 1)) {
    const skill = companySkill(row, uniqueSlug(row, slugs), apiUrl);
    const content =
      total + skill.content.length <= SKILLS_TOTAL_MAX_CHARS ? skill.content : pointer(row, apiUrl);
    total += content.length;
    skills.push({ ...skill, content });
  }
  return skills;
}

/** The skill's slug, or `<namespace>-<slug>` (then numbered) when another skill of the run has it. */
function uniqueSlug(row: SkillRow, taken: Set<string>): string {
  const namespace = (row.key.split("/")[0] ?? "company").replace(/_/g, "-");
  const base = `${namespace}-${row.slug}`.slice(0, 60).replace(/-+$/, "");
  let slug = row.slug;
  for (let n = 2; taken.has(slug); n += 1) slug = n === 2 ? base : `${base}-${n}`;
  taken.add(slug);
  return slug;
}

function pointer(row: SkillRow, apiUrl: string): string {
  return `This skill's text did not fit in the run. Read it from GET ${apiUrl}/companies/${row.companyId}/skills (the entry with key "${row.key}").`;
}

function companySkill(row: SkillRow, slug: string, apiUrl: string): RunSkill {
  const text = row.content ?? "";
  const content =
    text.length <= SKILL_CONTENT_MAX_CHARS
      ? text
      : `${text.slice(0, SKILL_CONTENT_MAX_CHARS - 400)}\n\n[Cut here: the whole skill is ${text.length} characters. ${pointer(row, apiUrl)}]`;
  return {
    key: row.key,
    slug,
    name: row.name.slice(0, 200),
    description: (row.description || row.name).slice(0, 1024),
    content,
  };
}
