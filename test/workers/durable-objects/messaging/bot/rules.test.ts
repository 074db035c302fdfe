import { describe, expect, it } from "vitest";
import {
  REGEX_INPUT_LIMIT,
  REGEX_MAX_LENGTH,
  REGEX_MAX_PROGRAM_SIZE,
  regexProblem,
} from "../../../../../durable-objects/messaging/bot/regex";
import {
  type AccessMode,
  bareJid,
  commandEnabled,
  firstMatch,
  formatUptime,
  listHas,
  mayRunCommand,
  menuText,
  parseCommand,
  type RuleMatch,
  ruleMatches,
  triggerApplies,
  triggersAutoReply,
} from "../../../../../durable-objects/messaging/bot/rules";

const ALICE = "628123456789@s.whatsapp.net";
const PREFIX_OF_ALICE = "62812@s.whatsapp.net";
const BOB = "447700900123@s.whatsapp.net";
const GROUP = "120363025246125888@g.us";

const commands = (botMode: AccessMode, allowed: string[] = [], blocked: string[] = []) => ({
  botMode,
  botAllowedJids: allowed,
  botBlockedJids: blocked,
});
const autoReplies = (autoReplyMode: AccessMode, allowed: string[] = [], blocked: string[] = []) => ({
  autoReplyMode,
  autoReplyAllowedJids: allowed,
  autoReplyBlockedJids: blocked,
});
const me = { fromMe: true, sender: "111111111111@s.whatsapp.net" };
const from = (sender: string) => ({ fromMe: false, sender });

describe("whole-JID lists", () => {
  it("matches whole JIDs only, ignoring the device part", () => {
    expect(listHas([ALICE], ALICE)).toBe(true);
    expect(listHas([PREFIX_OF_ALICE], ALICE)).toBe(false);
    expect(listHas(["628123456789@s.whatsapp.net"], "628123456789:7@s.whatsapp.net")).toBe(true);
    expect(listHas([ALICE], "6281234567890@s.whatsapp.net")).toBe(false);
    expect(bareJid("1234:5@s.whatsapp.net")).toBe("1234@s.whatsapp.net");
    expect(bareJid(GROUP)).toBe(GROUP);
  });
});

describe("who may run commands (botMode)", () => {
  it("OWNER: only the account's own messages", () => {
    expect(mayRunCommand(commands("OWNER"), me)).toBe(true);
    expect(mayRunCommand(commands("OWNER"), from(ALICE))).toBe(false);
  });
  it("ALL: anyone", () => {
    expect(mayRunCommand(commands("ALL"), from(ALICE))).toBe(true);
    expect(mayRunCommand(commands("ALL"), me)).toBe(true);
  });
  it("SPECIFIC: own messages and listed senders, whole JIDs", () => {
    expect(mayRunCommand(commands("SPECIFIC", [ALICE]), from(ALICE))).toBe(true);
    expect(mayRunCommand(commands("SPECIFIC", [ALICE]), from(BOB))).toBe(false);
    expect(mayRunCommand(commands("SPECIFIC", [PREFIX_OF_ALICE]), from(ALICE))).toBe(false);
    expect(mayRunCommand(commands("SPECIFIC", []), me)).toBe(true);
  });
  it("BLACKLIST: everyone but listed senders; own messages always", () => {
    expect(mayRunCommand(commands("BLACKLIST", [], [ALICE]), from(ALICE))).toBe(false);
    expect(mayRunCommand(commands("BLACKLIST", [], [ALICE]), from(BOB))).toBe(true);
    expect(mayRunCommand(commands("BLACKLIST", [], [PREFIX_OF_ALICE]), from(ALICE))).toBe(true);
    expect(mayRunCommand(commands("BLACKLIST", [], [me.sender]), me)).toBe(true);
  });
});

describe("who triggers auto-replies (autoReplyMode)", () => {
  it("OWNER is macro mode: own messages only", () => {
    expect(triggersAutoReply(autoReplies("OWNER"), me)).toBe(true);
    expect(triggersAutoReply(autoReplies("OWNER"), from(ALICE))).toBe(false);
  });
  it("ALL: every incoming message, never own ones", () => {
    expect(triggersAutoReply(autoReplies("ALL"), from(ALICE))).toBe(true);
    expect(triggersAutoReply(autoReplies("ALL"), me)).toBe(false);
  });
  it("SPECIFIC: incoming from listed senders (whole JIDs)", () => {
    expect(triggersAutoReply(autoReplies("SPECIFIC", [ALICE]), from(ALICE))).toBe(true);
    expect(triggersAutoReply(autoReplies("SPECIFIC", [ALICE]), from(BOB))).toBe(false);
    expect(triggersAutoReply(autoReplies("SPECIFIC", [PREFIX_OF_ALICE]), from(ALICE))).toBe(false);
    expect(triggersAutoReply(autoReplies("SPECIFIC", [me.sender]), me)).toBe(false);
  });
  it("BLACKLIST: incoming except listed senders", () => {
    expect(triggersAutoReply(autoReplies("BLACKLIST", [], [ALICE]), from(ALICE))).toBe(false);
    expect(triggersAutoReply(autoReplies("BLACKLIST", [], [ALICE]), from(BOB))).toBe(true);
    expect(triggersAutoReply(autoReplies("BLACKLIST", [], [PREFIX_OF_ALICE]), from(ALICE))).toBe(true);
    expect(triggersAutoReply(autoReplies("BLACKLIST"), me)).toBe(false);
  });
});

describe("people by phone number or by LID", () => {
  const ALICE_LID = "201234567890123@lid";
  // A message from Alice's LID whose phone number the session knows, and one from her number.
  const fromLid = { fromMe: false, sender: ALICE_LID, alias: ALICE };
  const fromNumber = { fromMe: false, sender: ALICE, alias: ALICE_LID };
  const unknownLid = { fromMe: false, sender: ALICE_LID, alias: null };

  it("a list naming the phone number or the LID names the person, whichever the message came from", () => {
    for (const list of [[ALICE], [ALICE_LID]]) {
      expect(mayRunCommand(commands("SPECIFIC", list), fromLid)).toBe(true);
      expect(mayRunCommand(commands("SPECIFIC", list), fromNumber)).toBe(true);
      expect(mayRunCommand(commands("BLACKLIST", [], list), fromLid)).toBe(false);
      expect(triggersAutoReply(autoReplies("SPECIFIC", list), fromLid)).toBe(true);
      expect(triggersAutoReply(autoReplies("BLACKLIST", [], list), fromNumber)).toBe(false);
    }
  });

  it("a LID whose number the session does not know matches only by LID", () => {
    expect(mayRunCommand(commands("SPECIFIC", [ALICE]), unknownLid)).toBe(false);
    expect(mayRunCommand(commands("SPECIFIC", [ALICE_LID]), unknownLid)).toBe(true);
    expect(triggersAutoReply(autoReplies("BLACKLIST", [], [ALICE]), unknownLid)).toBe(true);
    expect(mayRunCommand(commands("SPECIFIC", [BOB]), fromLid)).toBe(false);
  });
});

describe("commands", () => {
  it("parses the prefix, aliases and case; anything else is not a command", () => {
    expect(parseCommand("#ping", "#")).toBe("ping");
    expect(parseCommand("  #PING now", "#")).toBe("ping");
    expect(parseCommand("# uptime", "#")).toBe("uptime");
    expect(parseCommand("#help", "#")).toBe("menu");
    expect(parseCommand("#s", "#")).toBe("sticker");
    expect(parseCommand("#stiker", "#")).toBe("sticker");
    expect(parseCommand("!id", "!")).toBe("id");
    expect(parseCommand("#id", "!")).toBeNull();
    expect(parseCommand("ping", "#")).toBeNull();
    expect(parseCommand("#pingpong", "#")).toBeNull();
    expect(parseCommand("#constructor", "#")).toBeNull();
    expect(parseCommand("#", "#")).toBeNull();
  });
  it("honours the enable switches; id and menu are always on", () => {
    const off = { enablePing: false, enableUptime: false, enableSticker: false };
    expect(commandEnabled(off, "ping")).toBe(false);
    expect(commandEnabled(off, "uptime")).toBe(false);
    expect(commandEnabled(off, "sticker")).toBe(false);
    expect(commandEnabled(off, "id")).toBe(true);
    expect(commandEnabled(off, "menu")).toBe(true);
  });
  it("lists only enabled commands in the menu, under the bot's name", () => {
    const menu = menuText({
      botName: "Helper",
      prefix: "!",
      enablePing: true,
      enableUptime: false,
      enableSticker: false,
    });
    expect(menu).toContain("Helper");
    expect(menu).toContain("!ping");
    expect(menu).not.toContain("!uptime");
    expect(menu).not.toContain("!sticker");
    expect(menu).toContain("!id");
  });
  it("formats uptime", () => {
    expect(formatUptime(4_000)).toBe("4s");
    expect(formatUptime(65_000)).toBe("1m 5s");
    expect(formatUptime(3_600_000)).toBe("1h 0m 0s");
    expect(formatUptime(90_061_000)).toBe("1d 1h 1m 1s");
    expect(formatUptime(-5)).toBe("0s");
  });
});

describe("rule matching", () => {
  const rule = (
    keyword: string,
    matchType: RuleMatch["matchType"],
    triggerType: RuleMatch["triggerType"] = "ALL",
  ) => ({
    keyword,
    matchType,
    triggerType,
  });
  it("EXACT compares the whole lowercased text", () => {
    expect(ruleMatches(rule("Hello", "EXACT"), "hello")).toBe(true);
    expect(ruleMatches(rule("hello", "EXACT"), "  HELLO ")).toBe(true);
    expect(ruleMatches(rule("hello", "EXACT"), "hello there")).toBe(false);
  });
  it("CONTAINS finds a substring", () => {
    expect(ruleMatches(rule("price", "CONTAINS"), "What is the PRICE?")).toBe(true);
    expect(ruleMatches(rule("price", "CONTAINS"), "prize")).toBe(false);
  });
  it("STARTS_WITH checks the start", () => {
    expect(ruleMatches(rule("order", "STARTS_WITH"), "Order #12")).toBe(true);
    expect(ruleMatches(rule("order", "STARTS_WITH"), "my order")).toBe(false);
  });
  it("REGEX is case-insensitive and keeps escapes as written", () => {
    expect(ruleMatches(rule("^inv-\\d{3}$", "REGEX"), "INV-123")).toBe(true);
    expect(ruleMatches(rule("^inv-\\d{3}$", "REGEX"), "INV-12")).toBe(false);
    expect(ruleMatches(rule("\\D+", "REGEX"), "ABC")).toBe(true);
    expect(ruleMatches(rule("(", "REGEX"), "(")).toBe(false);
  });
  it("triggerType: GROUP only in groups, PRIVATE only in person chats", () => {
    expect(triggerApplies("ALL", GROUP)).toBe(true);
    expect(triggerApplies("GROUP", GROUP)).toBe(true);
    expect(triggerApplies("GROUP", ALICE)).toBe(false);
    expect(triggerApplies("PRIVATE", ALICE)).toBe(true);
    expect(triggerApplies("PRIVATE", GROUP)).toBe(false);
  });
  it("the first applicable matching rule wins", async () => {
    const rules = [
      { ...rule("hi", "CONTAINS", "GROUP"), n: 1 },
      { ...rule("hi", "CONTAINS"), n: 2 },
      { ...rule("hi", "EXACT"), n: 3 },
    ];
    expect((await firstMatch(rules, ALICE, "hi")).rule?.n).toBe(2);
    expect((await firstMatch(rules, GROUP, "hi")).rule?.n).toBe(1);
    expect((await firstMatch(rules, ALICE, "bye")).rule).toBeNull();
  });
  it("skips the rules left once the budget is spent, counting what it tried and skipped", async () => {
    const rules = [rule("nope", "CONTAINS"), rule("^hi$", "REGEX"), rule("hi", "CONTAINS")];
    expect(await firstMatch(rules, ALICE, "hi")).toEqual({ rule: rules[1], tried: 2, skipped: 0 });
    // A budget already spent: plain rules still run, the first REGEX rule ends the search.
    expect(await firstMatch(rules, ALICE, "hi", -1)).toEqual({ rule: null, tried: 1, skipped: 2 });
    const plain = [rule("nope", "CONTAINS"), rule("hi", "CONTAINS")];
    expect((await firstMatch(plain, ALICE, "hi", -1)).rule).toBe(plain[1]);
  });
});

describe("regex guard", () => {
  it("accepts ordinary patterns", () => {
    for (const pattern of [
      "^hi$",
      "\\d+",
      "(hello|hi) there",
      "(?:ab)+",
      "colou?r",
      "[a+]+",
      "(ab){2}",
      "(?<w>x)",
    ]) {
      expect(regexProblem(pattern), pattern).toBeNull();
    }
  });
  it("refuses invalid syntax", () => {
    expect(regexProblem("(abc")).toMatch(/Invalid regular expression/);
    expect(regexProblem("[")).toMatch(/Invalid regular expression/);
  });
  it("runs every pattern in linear time: the patterns that froze a backtracking engine are fine", () => {
    // \w*\w*\w*\w*! against 170 characters held the Worker for 25 s on JavaScript's RegExp.
    const flood = "a".repeat(REGEX_INPUT_LIMIT - 1);
    const cases: Array<[string, string]> = [
      ["\\w*\\w*\\w*\\w*!", flood],
      ["^(a+)+$", `${flood}!`],
      ["^(a|aa)+$", `${flood}!`],
      ["^(\\w+\\s?)*$", `${flood}!`],
      ["^(.*a){3,}$", `${flood}!`],
    ];
    for (const [pattern, text] of cases) {
      expect(regexProblem(pattern), pattern).toBeNull();
      expect(ruleMatches({ keyword: pattern, matchType: "REGEX", triggerType: "ALL" }, text), pattern).toBe(
        false,
      );
    }
  });
  it("refuses what RE2 cannot run, naming the feature", () => {
    expect(regexProblem("(?=a)b")).toMatch(/no lookahead/);
    expect(regexProblem("(?!x)y")).toMatch(/no lookahead/);
    expect(regexProblem("(?<=a)b")).toMatch(/no lookbehind/);
    expect(regexProblem("(a)\\1")).toMatch(/no backreferences/);
    expect(regexProblem("a++")).toMatch(/no possessive quantifiers/);
  });
  it("refuses patterns compiling past the size limit, naming it; real rules are far below", () => {
    expect(regexProblem("\\w{1,499}!")).toBeNull(); // 1000 instructions: the most allowed
    expect(regexProblem("\\w{1,500}!")).toBe(
      `A REGEX keyword may compile to at most ${REGEX_MAX_PROGRAM_SIZE} RE2 instructions; this one compiles to 1002 (counted repeats such as \\w{1,1000} multiply them): simplify it`,
    );
    // Refused from its counted repeats alone, before compiling (which takes ~0.4 s in workerd).
    expect(regexProblem(`${"\\w{1,1000}".repeat(18)}!`)).toMatch(/compiles to at least 18000 \(/);
    expect(regexProblem("[{1000}]{1,3}")).toBeNull(); // braces inside a class are not a repeat
    // A stored rule over the limit (saved before it existed) never matches instead of running.
    const regex = (keyword: string): RuleMatch => ({ keyword, matchType: "REGEX", triggerType: "ALL" });
    expect(ruleMatches(regex("\\w{1,1000}"), "abc")).toBe(false);
    expect(ruleMatches(regex("\\w{1,499}"), "abc")).toBe(true);
  });
  it("refuses patterns over the length limit", () => {
    expect(regexProblem("a".repeat(REGEX_MAX_LENGTH))).toBeNull();
    expect(regexProblem("a".repeat(REGEX_MAX_LENGTH + 1))).toMatch(/at most/);
  });
});
