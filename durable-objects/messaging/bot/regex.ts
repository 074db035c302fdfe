import { RE2JS } from "re2js";

/**
 * REGEX auto-reply keywords: checked when saved, compiled once, and bounded when run. RE2 (re2js) is
 * linear in the text, whatever the pattern, but its cost grows with the compiled program: matching
 * walks up to every instruction at every character. Counted repeats multiply instructions (`\w{1,1000}`
 * alone is 2,001), so a 181-character pattern of them (35,985 instructions) held the Worker for 28.5 s
 * on one 2,048-character message. So a keyword's compiled size is capped when it is saved, and one
 * rule's match costs at most REGEX_MAX_PROGRAM_SIZE × REGEX_INPUT_LIMIT steps (about 0.1 s in workerd).
 */

export const REGEX_MAX_LENGTH = 200;
/** Regexes only ever see this much of a message (RE2 is linear in it). */
export const REGEX_INPUT_LIMIT = 2048;
/**
 * The most RE2 instructions (re2js `programSize()`, the compiled Prog's instruction count) a REGEX
 * keyword may compile to. Real rules are far below: a keyword or phone pattern is 10-40, an alternation
 * of forty words with \b about 260, `\d{200}` about 200. The review's patterns are 15,995 and 35,985.
 */
export const REGEX_MAX_PROGRAM_SIZE = 1000;

/** Instructions the compiled-regex cache holds in all (~170 bytes each once run): a few MB at most. */
const CACHE_MAX_INSTRUCTIONS = 50_000;

/**
 * A REGEX keyword compiled for RE2 semantics (re2js: linear time in the text, whatever the pattern),
 * case-insensitive. JavaScript's backtracking RegExp let `\w*\w*\w*\w*!` hold the Worker for 25 s
 * on one 170-character message; with RE2 no pattern can.
 */
function compileRegex(pattern: string): RE2JS {
  return RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE);
}

/** RE2 refuses what it cannot run in linear time; the message names the feature. */
function unsupportedFeature(pattern: string, message: string): string | null {
  if (/`\(\?[=!]/.test(message) || /\(\?[=!]/.test(pattern)) return "lookahead ((?=…) and (?!…))";
  if (/\(\?<[=!]/.test(pattern)) return "lookbehind ((?<=…) and (?<!…))";
  if (/invalid escape sequence: `\\[1-9]/.test(message) || /\\k</.test(pattern))
    return "backreferences (\\1, \\k<name>)";
  if (/invalid nested repetition operator: `[*+?}][+]/.test(message))
    return "possessive quantifiers (a++, a*+)";
  return null;
}

/**
 * Compiled keywords by pattern text, least recently used first. A rule's pattern is its identity, so
 * a rule change compiles once and unchanged rules never again; null marks a pattern that may not run.
 */
const compiled = new Map<string, RE2JS | null>();
let cachedInstructions = 0;

const sizeOf = (regex: RE2JS | null) => regex?.programSize() ?? 0;

function remember(pattern: string, regex: RE2JS | null): void {
  if (compiled.has(pattern)) return;
  compiled.set(pattern, regex);
  cachedInstructions += sizeOf(regex);
  for (const [oldest, entry] of compiled) {
    if (cachedInstructions <= CACHE_MAX_INSTRUCTIONS || oldest === pattern) break;
    compiled.delete(oldest);
    cachedInstructions -= sizeOf(entry);
  }
}

/**
 * A floor under the compiled size, read from the text without compiling: every counted repeat
 * `{n}`, `{n,}`, `{n,m}` outside a character class or `\Q…\E` copies its atom at least max(n, m)
 * times, one instruction or more each, and nesting only multiplies. Compiling the review's 181
 * characters of `\w{1,1000}` takes ~0.4 s in workerd; this refuses it first, for nothing.
 */
function repeatFloor(pattern: string): number {
  let floor = 0;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === "\\") {
      if (pattern[i + 1] === "Q") {
        const end = pattern.indexOf("\\E", i + 2);
        i = end < 0 ? pattern.length : end + 1;
      } else i += 1;
    } else if (char === "[") {
      i = classEnd(pattern, i);
    } else if (char === "{") {
      const repeat = /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(i));
      if (repeat) floor += Math.max(Number(repeat[1]), Number(repeat[2] || 0));
    }
  }
  return floor;
}

/** The index of the `]` closing the class opened at `start` (a leading `]` or `^]` is literal). */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === "^") i += 1;
  if (pattern[i] === "]") i += 1;
  for (; i < pattern.length; i++) {
    if (pattern[i] === "\\") i += 1;
    else if (pattern[i] === "]") return i;
  }
  return pattern.length;
}

const tooBig = (size: string) =>
  `A REGEX keyword may compile to at most ${REGEX_MAX_PROGRAM_SIZE} RE2 instructions; this one ` +
  `compiles to ${size} (counted repeats such as \\w{1,1000} multiply them): simplify it`;

/**
 * Why a keyword cannot be stored as a REGEX, or null when it can: too long, not valid, a feature RE2
 * does not have (lookaround, backreferences, possessive quantifiers), or a compiled program over
 * REGEX_MAX_PROGRAM_SIZE; each message names the limit or the feature.
 */
export function regexProblem(pattern: string): string | null {
  if (pattern.length > REGEX_MAX_LENGTH) return `A REGEX keyword is at most ${REGEX_MAX_LENGTH} characters`;
  const floor = repeatFloor(pattern);
  if (floor > REGEX_MAX_PROGRAM_SIZE) return tooBig(`at least ${floor}`);
  let regex: RE2JS;
  try {
    regex = compileRegex(pattern);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const feature = unsupportedFeature(pattern, message);
    return feature
      ? `REGEX rules run on RE2, which has no ${feature}: rewrite the pattern without it`
      : `Invalid regular expression: ${message}`;
  }
  const size = regex.programSize();
  if (size > REGEX_MAX_PROGRAM_SIZE) return tooBig(String(size));
  remember(pattern, regex);
  return null;
}

/**
 * The compiled keyword, or null when it may not run: invalid, or over the size limit (a rule saved
 * before the limit existed never matches; saving it again names the problem).
 */
export function compiledRegex(pattern: string): RE2JS | null {
  const cached = compiled.get(pattern);
  if (cached !== undefined) {
    compiled.delete(pattern); // most recently used goes last
    compiled.set(pattern, cached);
    return cached;
  }
  let regex: RE2JS | null = null;
  try {
    if (repeatFloor(pattern) > REGEX_MAX_PROGRAM_SIZE) throw new Error("over the size limit");
    const candidate = compileRegex(pattern);
    if (candidate.programSize() <= REGEX_MAX_PROGRAM_SIZE) regex = candidate;
  } catch {
    regex = null;
  }
  remember(pattern, regex);
  return regex;
}

/** Whether the keyword finds a match in the first REGEX_INPUT_LIMIT characters of `text`. */
export function regexFinds(pattern: string, text: string): boolean {
  return compiledRegex(pattern)?.matcher(text.slice(0, REGEX_INPUT_LIMIT)).find() ?? false;
}
