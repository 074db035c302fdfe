import { isSecretKey } from "../shared";

/**
 * Secrets never leave in a package. An adapter config loses every value that is a secret reference,
 * sits under a credential-looking key, or looks like a credential itself; the names are returned so the
 * manifest can list them as inputs the receiver must supply.
 */

/** Common credential shapes (OpenAI/Anthropic, GitHub, Slack, our agent keys, AWS access keys). */
const SECRET_VALUE = /^(sk-|sk_|ghp_|gho_|github_pat_|xox[abp]-|swa_|AKIA[0-9A-Z]{12})/;

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

const isSecretRef = (value: unknown) => isObject(value) && value.type === "secret_ref";

function isSecretEntry(key: string, value: unknown): boolean {
  if (isSecretRef(value)) return true;
  if (typeof value === "string" && SECRET_VALUE.test(value)) return true;
  return isSecretKey(key) && value !== null && value !== "";
}

/** `env.X` is named X (what a receiver sets); anything else by its dotted path. */
const inputName = (path: string[]) => (path[0] === "env" && path.length === 2 ? path[1] : path.join("."));

function strip(value: unknown, path: string[], removed: string[]): unknown {
  if (Array.isArray(value)) return value.map((item, index) => strip(item, [...path, String(index)], removed));
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
