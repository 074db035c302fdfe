/**
 * The run's skills as the agent CLIs read them: one directory per skill named by its slug, holding a
 * SKILL.md with YAML front matter (name, description) and the skill's text; the open Agent Skills
 * layout Claude Code, Codex, Gemini CLI and OpenCode all load. Each adapter writes them under the
 * run's own directory (never the project checkout, never a directory other agents of the runner
 * share) and points its CLI there in the way that CLI allows.
 */
import path from "node:path";
import type { RunAssignment, RunSkill } from "../../protocol/runner.ts";

/** One line, as a YAML double-quoted scalar (a JSON string is one). */
const yamlString = (text: string): string => JSON.stringify(text.replace(/\s+/g, " ").trim());

export function skillMarkdown(skill: RunSkill): string {
  return [
    "---",
    `name: ${skill.slug}`,
    `description: ${yamlString(skill.description || skill.name)}`,
    "---",
    "",
    `# ${skill.name}`,
    "",
    skill.content.trim(),
    "",
  ].join("\n");
}

/** `<dir>/<slug>/SKILL.md` for each of the run's skills. */
export function skillFiles(run: RunAssignment, dir: string): Array<{ path: string; content: string }> {
  return (run.skills ?? []).map((skill) => ({
    path: path.join(dir, skill.slug, "SKILL.md"),
    content: skillMarkdown(skill),
  }));
}
