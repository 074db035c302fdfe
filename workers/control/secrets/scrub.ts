/**
 * Redaction by value: a run's output is scrubbed of the company's secret values (every version,
 * current or rotated away) and of platform keys before it is stored, and again when it is read, so
 * logs stored before this existed are never served raw either.
 *
 * What counts as a secret's appearance: the value itself, the value trimmed (a value pasted with a
 * trailing newline is usually printed without it), its JSON-escaped form (CLIs that stream JSON
 * print a multi-line value with `\n`), its URL-encoded form, and its base64 (standard and URL-safe,
 * from the value's first byte: `echo $TOKEN | base64`). A base64 of the value inside a longer
 * encoded blob, or any other transformation, is not caught: redaction is a safety net, not a reason
 * to print secrets. Values shorter than SCRUB_MIN_CHARS are left alone: scrubbing "abc" out of every
 * log would wreck the logs and protect little.
 *
 * Platform keys (agent keys `swa_…`, run-scoped keys included, and user keys `swb_…`) are scrubbed by
 * their shape, so the run's own key never needs to be known in plain text here.
 */

export const SCRUB_MIN_CHARS = 6;

/** A secret as the scrubber knows it: what replaces it, and one of its values. */
export interface Redactable {
  label: string;
  value: string;
}

interface Pattern {
  text: string;
  label: string;
  /** KMP failure table of `text`, built on first use (only the tail check needs it). */
  failure?: Int32Array;
}

/** Agent keys (run-scoped ones included) and user keys: prefix, 2-char tag, base62 body. */
const PLATFORM_KEY = /sw[ab]_[0-9A-Za-z]{45}/g;
/** The end of a chunk that could still become a platform key once the next chunk arrives. */
const PLATFORM_KEY_START = /s(?:w(?:[ab](?:_[0-9A-Za-z]{0,44})?)?)?$/;
const PLATFORM_KEY_LABEL = "platform_key";

export const redactionMark = (label: string) => `[redacted:${label}]`;

function base64Of(value: string): string {
  const bytes = new TextEncoder().encode(value);
  // Only whole 3-byte groups: their characters do not depend on what follows the value.
  const whole = bytes.subarray(0, bytes.length - (bytes.length % 3));
  let binary = "";
  for (const byte of whole) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The forms a value is recognised in (see the module comment), each at least SCRUB_MIN_CHARS long. */
function formsOf(value: string): string[] {
  const base64 = base64Of(value);
  const forms = [
    value,
    value.trim(),
    JSON.stringify(value).slice(1, -1),
    encodeURIComponent(value),
    base64.length >= 8 ? base64 : "",
    base64.length >= 8 ? base64.replace(/\+/g, "-").replace(/\//g, "_") : "",
  ];
  return forms.filter((form) => form.length >= SCRUB_MIN_CHARS);
}

function failureOf(pattern: Pattern): Int32Array {
  if (pattern.failure) return pattern.failure;
  const text = pattern.text;
  const failure = new Int32Array(text.length);
  for (let i = 1, k = 0; i < text.length; i++) {
    while (k > 0 && text[i] !== text[k]) k = failure[k - 1] ?? 0;
    if (text[i] === text[k]) k++;
    failure[i] = k;
  }
  pattern.failure = failure;
  return failure;
}

/** Length of the longest suffix of `text` that is a proper prefix of the pattern (linear, KMP). */
function suffixPrefix(text: string, pattern: Pattern): number {
  const p = pattern.text;
  const failure = failureOf(pattern);
  let state = 0;
  for (let i = Math.max(0, text.length - (p.length - 1)); i < text.length; i++) {
    while (state > 0 && text[i] !== p[state]) state = failure[state - 1] ?? 0;
    if (text[i] === p[state]) state++;
    if (state === p.length) state = failure[state - 1] ?? 0;
  }
  return state;
}

interface Span {
  start: number;
  end: number;
  label: string;
}

/** Reversed by UTF-16 unit: patterns and text are reversed alike, so matching is unchanged. */
const reversed = (text: string) => text.split("").reverse().join("");

export class Scrubber {
  /** Longest first, so where two forms start at the same place the longer one decides. */
  readonly #patterns: Pattern[];
  #reversedPatterns: Pattern[] | undefined;

  constructor(secrets: readonly Redactable[]) {
    const byText = new Map<string, Pattern>();
    for (const { label, value } of secrets)
      for (const text of formsOf(value)) if (!byText.has(text)) byText.set(text, { text, label });
    this.#patterns = [...byText.values()].sort((a, b) => b.text.length - a.text.length);
  }

  /** `text` with every secret form and platform key replaced by `[redacted:<key>]`. */
  scrub(text: string): string {
    const spans: Span[] = [];
    for (const pattern of this.#patterns) {
      for (let at = text.indexOf(pattern.text); at !== -1; at = text.indexOf(pattern.text, at + 1))
        spans.push({ start: at, end: at + pattern.text.length, label: pattern.label });
    }
    for (const match of text.matchAll(PLATFORM_KEY))
      spans.push({ start: match.index, end: match.index + match[0].length, label: PLATFORM_KEY_LABEL });
    if (spans.length === 0) return text;
    spans.sort((a, b) => a.start - b.start || b.end - a.end);
    let out = "";
    let cursor = 0;
    for (const span of spans) {
      if (span.end <= cursor) continue;
      // Overlapping matches merge: the whole stretch goes, under the first one's label.
      if (span.start < cursor) {
        cursor = span.end;
        continue;
      }
      out += text.slice(cursor, span.start) + redactionMark(span.label);
      cursor = span.end;
    }
    return out + text.slice(cursor);
  }

  /**
   * How many characters at the end of `text` could be the start of a secret (or platform key) that
   * the next chunk completes: ingestion holds them back until it knows.
   */
  heldLength(text: string): number {
    let held = PLATFORM_KEY_START.exec(text)?.[0].length ?? 0;
    for (const pattern of this.#patterns) held = Math.max(held, suffixPrefix(text, pattern));
    return held;
  }

  /**
   * `text` scrubbed, where it begins at an arbitrary cut of a longer output (a log's tail): a
   * leading remainder of a secret (its last characters, at least 4) is replaced as well.
   */
  scrubCutStart(text: string): string {
    this.#reversedPatterns ??= this.#patterns.map((pattern) => ({
      text: reversed(pattern.text),
      label: pattern.label,
    }));
    const longest = this.#patterns[0]?.text.length ?? 0;
    const back = reversed(text.slice(0, longest));
    let lead = 0;
    let label = "";
    for (const pattern of this.#reversedPatterns) {
      const length = suffixPrefix(back, pattern);
      if (length > lead) [lead, label] = [length, pattern.label];
    }
    if (lead < 4) return this.scrub(text);
    return redactionMark(label) + this.scrub(text.slice(lead));
  }

  /** A JSON value with every string in it scrubbed (transcript events). */
  scrubJson<T>(value: T): T {
    if (typeof value === "string") return this.scrub(value) as T;
    if (Array.isArray(value)) return value.map((item) => this.scrubJson(item)) as T;
    if (value !== null && typeof value === "object")
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([key, inner]) => [key, this.scrubJson(inner)]),
      ) as T;
    return value;
  }
}

/**
 * One step of scrubbing a stream that arrives in chunks: `held` (what the previous chunk held back)
 * and `text` are scrubbed together; what could still be the start of a secret is held back again.
 */
export function scrubStep(scrubber: Scrubber, held: string, text: string): { out: string; held: string } {
  const scrubbed = scrubber.scrub(held + text);
  const keep = scrubber.heldLength(scrubbed);
  return { out: scrubbed.slice(0, scrubbed.length - keep), held: scrubbed.slice(scrubbed.length - keep) };
}

/**
 * Stored chunks scrubbed as one output per stream: a secret split across two chunks of the same
 * stream is caught. A chunk keeps its place; what a stream's last chunk held back is put back on it.
 */
export function scrubChunks<T extends { stream: string; text: string }>(
  scrubber: Scrubber,
  chunks: T[],
): T[] {
  const held = new Map<string, string>();
  const lastOf = new Map<string, number>();
  const out = chunks.map((chunk, index) => {
    const step = scrubStep(scrubber, held.get(chunk.stream) ?? "", chunk.text);
    held.set(chunk.stream, step.held);
    lastOf.set(chunk.stream, index);
    return { ...chunk, text: step.out };
  });
  for (const [stream, index] of lastOf) {
    const last = out[index];
    if (last) last.text += held.get(stream) ?? "";
  }
  return out;
}
