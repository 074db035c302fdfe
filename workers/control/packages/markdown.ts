import { parse, stringify } from "yaml";
import { badRequest } from "../../http/errors";

/**
 * Markdown with YAML frontmatter, the way packages carry names and prose. Frontmatter is optional
 * when writing by hand; when present it must be a YAML mapping.
 */

export interface Markdown {
  front: Record<string, unknown>;
  body: string;
}

/** `---\n<yaml>---\n\n<body>`; the blank line is for people reading the file, parse drops it. */
export function renderMarkdown(front: Record<string, unknown>, body: string): string {
  const clean = Object.fromEntries(Object.entries(front).filter(([, value]) => value !== undefined));
  return `---\n${stringify(clean)}---\n\n${body}`;
}

/** Splits off the frontmatter; `path` names the file in the 400 when its YAML is broken. */
export function parseMarkdown(path: string, text: string): Markdown {
  const normalised = text.replace(/\r\n/g, "\n");
  if (!normalised.startsWith("---\n")) return { front: {}, body: normalised };
  const end = normalised.indexOf("\n---", 3);
  if (end < 0) throw badRequest(`${path}: frontmatter starts with --- but never ends`);
  const yamlText = normalised.slice(4, end + 1);
  const afterFence = normalised.slice(end + 4);
  const body = afterFence.replace(/^[^\n]*\n?/, "").replace(/^\n/, "");
  return { front: parseYamlMapping(path, yamlText), body };
}

/** A YAML document that must be a mapping (or empty); anything else is a 400 naming the file. */
export function parseYamlMapping(path: string, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw badRequest(`${path}: invalid YAML (${reason})`);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw badRequest(`${path}: expected a YAML mapping`);
  return value as Record<string, unknown>;
}

/** A frontmatter field that must be a string when present. */
export function frontString(path: string, front: Record<string, unknown>, key: string): string | null {
  const value = front[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw badRequest(`${path}: frontmatter field "${key}" must be a string`);
  return value;
}

/** Prose fields: surrounding blank lines are layout, not content; empty means none. */
export const proseOf = (body: string): string | null => body.trim() || null;
