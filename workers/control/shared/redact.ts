/**
 * What config reads, the activity log and company exports never show: values under a key whose name
 * looks like a credential, and values that look like one whatever their key is called (a known key
 * format, a password inside a URL, a long random string, the value after `--token` in `args`). Names
 * alone missed `OPENAI_KEY`, `https://user:pass@host` and secrets passed as arguments.
 */
export const REDACTED = "***REDACTED***";

const SECRET_KEY =
  /(secret|token|passw(or)?d|passwd|pwd|api[-_]?key|apikey|authorization|credential|private[-_]?key|cookie|session[-_]?id|(^|[_.-])key$|access[-_]?key|signing[-_]?key|client[-_]?secret)/i;

/** Key formats of the usual providers, ours included, and generic bearer tokens and JWTs. */
const SECRET_FORMATS: readonly RegExp[] = [
  /^(sk|rk|pk)[-_](live_|test_|proj-|ant-)?[A-Za-z0-9_-]{16,}$/, // OpenAI, Anthropic, Stripe
  /^(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}$/, // GitHub tokens
  /^github_pat_[A-Za-z0-9_]{20,}$/,
  /^glpat-[A-Za-z0-9_-]{16,}$/, // GitLab
  /^xox[abposr]-[A-Za-z0-9-]{10,}$/, // Slack
  /^AKIA[0-9A-Z]{16}$/, // AWS access key id
  /^AIza[0-9A-Za-z_-]{30,}$/, // Google API key
  /^npm_[A-Za-z0-9]{30,}$/,
  /^sw[abr]_[A-Za-z0-9]{20,}$/, // our user, agent and runner keys
  /^Bearer\s+\S{12,}$/i,
  /^eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}$/, // JWT
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
];

/** Bits of entropy per character of `text`, by character frequency. */
function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/**
 * A long run of letters and digits drawn nearly at random: what generated secrets look like. Words,
 * paths, URLs, UUIDs and model names are not (too short, separators, or too little entropy).
 */
function looksRandom(text: string): boolean {
  if (text.length < 24 || !/^[A-Za-z0-9+/_=-]+$/.test(text)) return false;
  if (!/[0-9]/.test(text) || !/[A-Za-z]/.test(text)) return false;
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text)) return false;
  return entropy(text) >= 4;
}

/** The whole string is a credential: a known format, or random enough to be one. */
export const isSecretValue = (text: string): boolean =>
  SECRET_FORMATS.some((format) => format.test(text.trim())) || looksRandom(text.trim());

export const isSecretKey = (key: string): boolean => SECRET_KEY.test(key);

/** `scheme://user:password@host…` keeps the user and drops the password. */
const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:)([^@\s/]+)(@)/gi;

/** A string with what is secret in it replaced: the whole of it, a URL's password, `--flag=value`. */
export function redactString(text: string): string {
  if (isSecretValue(text)) return REDACTED;
  const flag = /^(--?[\w.-]+=)(.+)$/.exec(text);
  if (flag?.[1] && flag[2] && (isSecretKey(flag[1]) || isSecretValue(flag[2])))
    return `${flag[1]}${REDACTED}`;
  return text.replace(URL_PASSWORD, `$1${REDACTED}$3`);
}

/** In an argument list, the value that follows a credential-looking flag (`--api-key sk-…`). */
function redactArgs(args: readonly unknown[]): unknown[] {
  return args.map((arg, index) => {
    const previous = args[index - 1];
    const afterSecretFlag =
      typeof previous === "string" && /^--?[\w.-]+$/.test(previous) && isSecretKey(previous);
    if (typeof arg === "string") return afterSecretFlag ? REDACTED : redactString(arg);
    return redactValue(arg);
  });
}

export function redactSecrets<T>(value: T): T {
  return redactValue(value) as T;
}

function redactValue(value: unknown): unknown {
  if (typeof value === "string") return redactString(value);
  if (Array.isArray(value)) return redactArgs(value);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    out[key] = isSecretKey(key) && inner !== null && inner !== "" ? REDACTED : redactValue(inner);
  }
  return out;
}
