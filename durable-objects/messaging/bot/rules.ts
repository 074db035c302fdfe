import { RE2JS } from "re2js";

/**
 * The bot's decisions as pure functions: who may run commands, who triggers auto-replies, what a
 * command is, whether a rule matches, and whether a regex is safe to store. No I/O, so each rule is
 * unit-tested on its own (test/workers/durable-objects/messaging/bot/rules.test.ts) and bot.ts only wires them to the session.
 */

export const ACCESS_MODES = ["OWNER", "SPECIFIC", "BLACKLIST", "ALL"] as const;
export type AccessMode = (typeof ACCESS_MODES)[number];

export const MATCH_TYPES = ["EXACT", "CONTAINS", "STARTS_WITH", "REGEX"] as const;
export type MatchType = (typeof MATCH_TYPES)[number];

export const TRIGGER_TYPES = ["ALL", "GROUP", "PRIVATE"] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

export const REGEX_MAX_LENGTH = 200;
/** Regexes only ever see this much of a message (RE2 is linear in it). */
export const REGEX_INPUT_LIMIT = 2048;

/** Who wrote a message, as the access rules need it. */
export interface Author {
  fromMe: boolean;
  /** The participant in a group, the peer in a direct chat. */
  sender: string;
  /**
   * The sender's other address, when the account knows it: the phone number behind a `<digits>@lid`
   * sender, or the LID of a phone-number sender. A list may name a person by either.
   */
  alias?: string | null;
}

/**
 * A JID without its device part (`628…:12@s.whatsapp.net` → `628…@s.whatsapp.net`): lists hold
 * accounts, and one account writes from several devices.
 */
export function bareJid(jid: string): string {
  const at = jid.indexOf("@");
  if (at < 0) return jid;
  const user = jid.slice(0, at);
  const colon = user.indexOf(":");
  return (colon < 0 ? user : user.slice(0, colon)) + jid.slice(at);
}

/** Whole-JID membership; WA-AKG's substring test let a short entry match every longer number. */
export function listHas(list: readonly string[], jid: string): boolean {
  const wanted = bareJid(jid);
  return list.some((entry) => bareJid(entry) === wanted);
}

/** Whether a list names the author, by its sender address or by its other one. */
function names(list: readonly string[], author: Author): boolean {
  return listHas(list, author.sender) || (!!author.alias && listHas(list, author.alias));
}

/** The lists only matter in these modes: the others need no lookup of the sender's other address. */
export const usesLists = (mode: AccessMode) => mode === "SPECIFIC" || mode === "BLACKLIST";

export interface CommandAccess {
  botMode: AccessMode;
  botAllowedJids: readonly string[];
  botBlockedJids: readonly string[];
}

/** The account's own messages may always run commands; the mode decides for everyone else. */
export function mayRunCommand(config: CommandAccess, author: Author): boolean {
  if (author.fromMe) return true;
  switch (config.botMode) {
    case "OWNER":
      return false;
    case "ALL":
      return true;
    case "SPECIFIC":
      return names(config.botAllowedJids, author);
    case "BLACKLIST":
      return !names(config.botBlockedJids, author);
  }
}

export interface AutoReplyAccess {
  autoReplyMode: AccessMode;
  autoReplyAllowedJids: readonly string[];
  autoReplyBlockedJids: readonly string[];
}

/** OWNER is "macro mode": only the account's own messages trigger; in the other modes they never do. */
export function triggersAutoReply(config: AutoReplyAccess, author: Author): boolean {
  if (config.autoReplyMode === "OWNER") return author.fromMe;
  if (author.fromMe) return false;
  switch (config.autoReplyMode) {
    case "ALL":
      return true;
    case "SPECIFIC":
      return names(config.autoReplyAllowedJids, author);
    case "BLACKLIST":
      return !names(config.autoReplyBlockedJids, author);
  }
}

// ── Commands ────────────────────────────────────────────────────────────────────────────────────

export type CommandName = "ping" | "uptime" | "id" | "menu" | "sticker";

const COMMAND_ALIASES: Readonly<Record<string, CommandName>> = {
  ping: "ping",
  uptime: "uptime",
  id: "id",
  menu: "menu",
  help: "menu",
  sticker: "sticker",
  s: "sticker",
  stiker: "sticker",
};

/** `#Ping` and `# ping` both read as ping; anything not a known command is ordinary text. */
export function parseCommand(text: string, prefix: string): CommandName | null {
  const trimmed = text.trim();
  if (!prefix || !trimmed.startsWith(prefix)) return null;
  const word = trimmed.slice(prefix.length).trim().split(/\s+/, 1)[0]?.toLowerCase() ?? "";
  return Object.hasOwn(COMMAND_ALIASES, word) ? (COMMAND_ALIASES[word] ?? null) : null;
}

export interface CommandSwitches {
  enablePing: boolean;
  enableUptime: boolean;
  enableSticker: boolean;
}

export function commandEnabled(config: CommandSwitches, command: CommandName): boolean {
  switch (command) {
    case "ping":
      return config.enablePing;
    case "uptime":
      return config.enableUptime;
    case "sticker":
      return config.enableSticker;
    case "id":
    case "menu":
      return true;
  }
}

/** The menu lists only what this bot will actually answer. */
export function menuText(config: CommandSwitches & { botName: string; prefix: string }): string {
  const p = config.prefix;
  const lines = [`🤖 *${config.botName}*`, "", "Commands:"];
  if (config.enablePing) lines.push(`${p}ping: check that the bot answers`);
  if (config.enableUptime) lines.push(`${p}uptime: how long WhatsApp has been connected`);
  lines.push(`${p}id: this chat's ID`);
  if (config.enableSticker) lines.push(`${p}sticker (${p}s): caption or reply to an image or short video`);
  lines.push(`${p}menu (${p}help): this list`);
  return lines.join("\n");
}

/** `3d 4h 5m 6s`, leading zero units left out. */
export function formatUptime(ms: number): string {
  let seconds = Math.max(0, Math.floor(ms / 1000));
  const parts: string[] = [];
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
  ] as const) {
    const count = Math.floor(seconds / size);
    seconds -= count * size;
    if (count > 0 || parts.length > 0) parts.push(`${count}${unit}`);
  }
  parts.push(`${seconds}s`);
  return parts.join(" ");
}

// ── Auto-reply rules ────────────────────────────────────────────────────────────────────────────

export interface RuleMatch {
  keyword: string;
  matchType: MatchType;
  triggerType: TriggerType;
}

export const isGroupChat = (chat: string) => chat.endsWith("@g.us");

export function triggerApplies(triggerType: TriggerType, chat: string): boolean {
  if (triggerType === "ALL") return true;
  return triggerType === "GROUP" ? isGroupChat(chat) : !isGroupChat(chat);
}

/**
 * Matching is on lowercased text. A REGEX keyword is kept as written (lowercasing would turn `\D`
 * into `\d`) and runs case-insensitively instead, on RE2 (compileRegex).
 */
export function ruleMatches(rule: RuleMatch, text: string): boolean {
  const lower = text.toLowerCase();
  switch (rule.matchType) {
    case "EXACT":
      return lower.trim() === rule.keyword.toLowerCase().trim();
    case "CONTAINS":
      return lower.includes(rule.keyword.toLowerCase());
    case "STARTS_WITH":
      return lower.trimStart().startsWith(rule.keyword.toLowerCase().trimStart());
    case "REGEX":
      try {
        return compileRegex(rule.keyword).matcher(text.slice(0, REGEX_INPUT_LIMIT)).find();
      } catch {
        return false;
      }
  }
}

/** The first rule (in the given order) that applies to this chat and matches the text. */
export function firstMatch<R extends RuleMatch>(rules: readonly R[], chat: string, text: string): R | null {
  return rules.find((rule) => triggerApplies(rule.triggerType, chat) && ruleMatches(rule, text)) ?? null;
}

// ── Regular expressions ─────────────────────────────────────────────────────────────────────────

/**
 * A REGEX keyword compiled for RE2 semantics (re2js: linear time in the text, whatever the pattern),
 * case-insensitive. JavaScript's backtracking RegExp let `\w*\w*\w*\w*!` hold the Worker for 25 s
 * on one 170-character message; with RE2 no pattern can.
 */
export function compileRegex(pattern: string): RE2JS {
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
 * Why a keyword cannot be stored as a REGEX, or null when it can: too long, not valid, or a feature
 * RE2 does not have (lookaround, backreferences, possessive quantifiers), named in the message.
 */
export function regexProblem(pattern: string): string | null {
  if (pattern.length > REGEX_MAX_LENGTH) return `A REGEX keyword is at most ${REGEX_MAX_LENGTH} characters`;
  try {
    compileRegex(pattern);
    return null;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const feature = unsupportedFeature(pattern, message);
    return feature
      ? `REGEX rules run on RE2, which has no ${feature}: rewrite the pattern without it`
      : `Invalid regular expression: ${message}`;
  }
}
