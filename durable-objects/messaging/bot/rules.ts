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
/** Regexes only ever see this much of a message, which bounds the work any pattern can cause. */
export const REGEX_INPUT_LIMIT = 2048;

/** Who wrote a message, as the access rules need it. */
export interface Author {
  fromMe: boolean;
  /** The participant in a group, the peer in a direct chat. */
  sender: string;
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
      return listHas(config.botAllowedJids, author.sender);
    case "BLACKLIST":
      return !listHas(config.botBlockedJids, author.sender);
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
      return listHas(config.autoReplyAllowedJids, author.sender);
    case "BLACKLIST":
      return !listHas(config.autoReplyBlockedJids, author.sender);
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
 * into `\d`) and runs with the `i` flag instead.
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
        return new RegExp(rule.keyword, "i").test(lower.slice(0, REGEX_INPUT_LIMIT));
      } catch {
        return false;
      }
  }
}

/** The first rule (in the given order) that applies to this chat and matches the text. */
export function firstMatch<R extends RuleMatch>(rules: readonly R[], chat: string, text: string): R | null {
  return rules.find((rule) => triggerApplies(rule.triggerType, chat) && ruleMatches(rule, text)) ?? null;
}

// ── Regex guard ─────────────────────────────────────────────────────────────────────────────────

interface GroupScan {
  /** A quantifier or an alternation somewhere inside: repeating the group could backtrack badly. */
  ambiguous: boolean;
}

/** Length of the quantifier starting at `i` (`+`, `*`, `?`, `{n}`, `{n,}`, `{n,m}`), 0 if none. */
function quantifierAt(pattern: string, i: number): { length: number; repeats: boolean } {
  const char = pattern[i];
  if (char === "+" || char === "*") return { length: 1, repeats: true };
  if (char === "?") return { length: 1, repeats: false };
  if (char !== "{") return { length: 0, repeats: false };
  const match = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
  if (!match) return { length: 0, repeats: false };
  const max =
    match[2] === undefined ? Number(match[1]) : match[3] === "" ? Number.POSITIVE_INFINITY : Number(match[3]);
  return { length: match[0].length, repeats: max > 1 };
}

/** `?:`, `?=`, `?!`, `?<=`, `?<!` or `?<name>` after `(`: syntax, not a quantifier. */
function groupPrefixLength(pattern: string, i: number): number {
  if (pattern[i] !== "?") return 0;
  const kind = pattern[i + 1];
  if (kind === ":" || kind === "=" || kind === "!") return 2;
  if (kind !== "<") return 0;
  if (pattern[i + 2] === "=" || pattern[i + 2] === "!") return 3;
  const close = pattern.indexOf(">", i);
  return close < 0 ? 0 : close - i + 1;
}

/**
 * Why a keyword cannot be stored as a REGEX, or null when it can. Besides compiling it, this refuses
 * the shapes behind catastrophic backtracking: a repeated group that itself contains a quantifier
 * (`(a+)+`, `(\w*)*`) or an alternation (`(a|aa)+`), and backreferences. It is a conservative
 * filter, not a proof: polynomial patterns remain possible, which the input cap keeps small.
 */
export function regexProblem(pattern: string): string | null {
  if (pattern.length > REGEX_MAX_LENGTH) return `A REGEX keyword is at most ${REGEX_MAX_LENGTH} characters`;
  try {
    new RegExp(pattern, "i");
  } catch (error) {
    return `Invalid regular expression: ${error instanceof Error ? error.message : String(error)}`;
  }
  const stack: GroupScan[] = [{ ambiguous: false }];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === "\\") {
      const next = pattern[i + 1] ?? "";
      if (!inClass && (/[1-9]/.test(next) || next === "k")) return "Backreferences are not allowed";
      i++;
      continue;
    }
    if (inClass) {
      if (char === "]") inClass = false;
      continue;
    }
    const top = stack[stack.length - 1];
    if (!top) break;
    if (char === "[") inClass = true;
    else if (char === "(") {
      stack.push({ ambiguous: false });
      i += groupPrefixLength(pattern, i + 1);
    } else if (char === "|") top.ambiguous = true;
    else if (char === ")") {
      const closed = stack.pop();
      const parent = stack[stack.length - 1];
      if (!closed || !parent) break;
      const quantifier = quantifierAt(pattern, i + 1);
      if (quantifier.repeats && closed.ambiguous) {
        return "Nested quantifiers such as (a+)+ or (a|aa)* can hang the matcher and are not allowed";
      }
      if (closed.ambiguous || quantifier.length > 0) parent.ambiguous = true;
      i += quantifier.length;
    } else if (quantifierAt(pattern, i).length > 0) {
      top.ambiguous = true;
    }
  }
  return null;
}
