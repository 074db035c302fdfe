/** Small readers for the JSON lines agent CLIs print (their shapes are checked field by field). */
export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);
export const str = (value: unknown): string | null => (typeof value === "string" ? value : null);
export const count = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0;

/** A line parsed as a JSON object with a string `type`, or null (the line is not the CLI's stream). */
export function typedLine(text: string): Json | null {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) && typeof value.type === "string" ? value : null;
  } catch {
    return null;
  }
}

/** The last non-empty line of a text (a CLI's last words on stderr). */
export const lastLine = (text: string): string =>
  text
    .trim()
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .at(-1) ?? "";
