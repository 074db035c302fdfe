import { regexFinds } from "./regex";

/**
 * The bot's decisions as functions of their inputs: who may run commands, who triggers auto-replies,
 * what a command is, whether a rule matches (REGEX keywords: regex.ts). No I/O, so each rule is
 * unit-tested on its own (test/workers/durable-objects/messaging/bot/rules.test.ts) and bot.ts only
 * wires them to the session.
 */

export const ACCESS_MODES = ["OWNER", "SPECIFIC", "BLACKLIST", "ALL"] as const;
export type AccessMode = (typeof ACCESS_MODES)[number];

export const MATCH_TYPES = ["EXACT", "CONTAINS", "STARTS_WITH", "REGEX"] as const;
export type MatchType = (typeof MATCH_TYPES)[number];

export const TRIGGER_TYPES = ["ALL", "GROUP", "PRIVATE"] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

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
 * into `\d`) and runs case-insensitively instead, on RE2 (regex.ts).
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
      return regexFinds(rule.keyword, text);
  }
}

/**
 * Real time one message's rules may take in all. Each REGEX rule is bounded (regex.ts: about 0.1 s at
 * worst), but 500 of them are not; past this the remaining rules are skipped and the caller logs it.
 * Real rule sets take a few milliseconds.
 */
export const AUTO_REPLY_BUDGET_MS = 1000;

export interface RuleSearch<R> {
  /** The first rule (in the given order) that applies to this chat and matches, if any was found. */
  rule: R | null;
  /** Rules looked at, and rules left unexamined because the budget was spent. */
  tried: number;
  skipped: number;
}

/** One turn of the event loop: other requests of this isolate run, and workerd's clock moves on. */
const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * The first applicable matching rule, within AUTO_REPLY_BUDGET_MS. workerd runs one JS thread per
 * isolate, so before each REGEX rule this yields a turn (nothing else waits longer than one rule) and
 * then checks the clock, which in workerd only moves between turns.
 */
export async function firstMatch<R extends RuleMatch>(
  rules: readonly R[],
  chat: string,
  text: string,
  budgetMs = AUTO_REPLY_BUDGET_MS,
): Promise<RuleSearch<R>> {
  const deadline = Date.now() + budgetMs;
  for (const [index, rule] of rules.entries()) {
    if (!triggerApplies(rule.triggerType, chat)) continue;
    if (rule.matchType === "REGEX") {
      await nextTurn();
      if (Date.now() > deadline) return { rule: null, tried: index, skipped: rules.length - index };
    }
    if (ruleMatches(rule, text)) return { rule, tried: index + 1, skipped: 0 };
  }
  return { rule: null, tried: rules.length, skipped: 0 };
}
