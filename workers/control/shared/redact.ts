/**
 * Config read APIs and the activity log never show obvious secrets: any key whose name looks like a
 * credential has its value replaced, at any depth (adapterConfig.env.OPENAI_API_KEY and the like).
 */
export const REDACTED = "***REDACTED***";
const SECRET_KEY =
  /(secret|token|password|passwd|api[-_]?key|apikey|authorization|credential|private[-_]?key|cookie)/i;

export function redactSecrets<T>(value: T): T {
  return redactValue(value) as T;
}

function redactValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactValue);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    out[key] = isSecretKey(key) && inner !== null && inner !== "" ? REDACTED : redactValue(inner);
  }
  return out;
}

export const isSecretKey = (key: string): boolean => SECRET_KEY.test(key);
