import { isSecretKey, isSecretValue, redactSecrets } from "../shared";

/**
 * Secrets never leave in a package. An adapter config loses every value that is a secret reference,
 * sits under a credential-looking key, or looks like a credential itself; the names are returned so the
 * manifest can list them as inputs the receiver must supply. What is left is redacted by value as
 * config reads are (a password inside a URL, a token among `args`), and those paths are inputs too.
 */

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

const isSecretRef = (value: unknown) => isObject(value) && value.type === "secret_ref";

function isSecretEntry(key: string, value: unknown): boolean {
  if (isSecretRef(value)) return true;
  if (typeof value === "string" && isSecretValue(value)) return true;
  return isSecretKey(key) && value !== null && value !== "";
}

/** `env.X` is named X (what a receiver sets); anything else by its dotted path. */
const inputName = (path: string[]) => (path[0] === "env" && path.length === 2 ? path[1] : path.join("."));

function strip(value: unknown, path: string[], removed: string[]): unknown {
  if (Array.isArray(value) || typeof value === "string") {
    const redacted = redactSecrets(value);
    if (JSON.stringify(redacted) !== JSON.stringify(value)) removed.push(path.join("."));
    if (typeof redacted === "string") return redacted;
    return (redacted as unknown[]).map((item, index) => strip(item, [...path, String(index)], removed));
  }
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (isSecretEntry(key, inner)) removed.push(inputName([...path, key]) ?? key);
    else out[key] = strip(inner, [...path, key], removed);
  }
  return out;
}

export function stripSecrets(config: Record<string, unknown>): {
  config: Record<string, unknown>;
  removed: string[];
} {
  const removed: string[] = [];
  const clean = strip(config, [], removed) as Record<string, unknown>;
  return { config: clean, removed };
}
