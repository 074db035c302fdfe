import type { OutgoingContent } from "../../../bridge/src/protocol/messaging";
import { CREATOR_WITHOUT_ACCESS_RULE, createdByOneOf, mayStillOperate } from "../access";
import { failure, type Outcome, type SessionContext, success } from "../context";
import { contentFromUrl } from "../media/from-url";
import type { AddedColumn } from "../schema";
import { BOT_MEMORY_SCHEMA } from "./memory";
import { regexProblem } from "./regex";
import { AUTO_REPLY_BUDGET_MS, firstMatch, type MatchType, type RuleSearch, type TriggerType } from "./rules";

/**
 * Keyword auto-reply rules, kept in the SessionDO next to the messages they answer, so matching an
 * incoming message never leaves the object. The Worker validates shapes; the rules that depend on a
 * rule's stored state (a PUT that only changes `matchType` to REGEX) are checked here.
 */

export const AUTO_REPLY_MEDIA_TYPES = ["image", "video", "audio", "document"] as const;
export type AutoReplyMediaType = (typeof AUTO_REPLY_MEDIA_TYPES)[number];

/** Enough for any real keyword list; a session is not a rules engine. */
export const MAX_AUTO_REPLIES = 500;

export const AUTO_REPLIES_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS auto_replies (
     id TEXT PRIMARY KEY, keyword TEXT NOT NULL, match_type TEXT NOT NULL, trigger_type TEXT NOT NULL,
     response TEXT NOT NULL, enabled INTEGER NOT NULL DEFAULT 1,
     created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
  "CREATE INDEX IF NOT EXISTS auto_replies_by_age ON auto_replies (created_at, id)",
  ...BOT_MEMORY_SCHEMA,
];

/**
 * `created_by`: the user on whose access the rule answers (who created it, or last changed it); NULL
 * on rules from before it was recorded. `disabled_reason`: why the service turned the rule off (its
 * creator's access ended), until someone turns it on again.
 */
export const AUTO_REPLIES_ADDED_COLUMNS: readonly AddedColumn[] = [
  { table: "auto_replies", column: "created_by", definition: "TEXT" },
  { table: "auto_replies", column: "disabled_reason", definition: "TEXT" },
];

/** What the rule answers with: text, media by URL (text as its caption), or both. */
interface StoredResponse {
  text?: string;
  mediaUrl?: string;
  mediaType?: AutoReplyMediaType;
}

type AutoReplyRow = {
  id: string;
  keyword: string;
  match_type: MatchType;
  trigger_type: TriggerType;
  response: string;
  enabled: number;
  created_by: string | null;
  disabled_reason: string | null;
  created_at: number;
  updated_at: number;
};

/** A rule as the API shows it (field names as in the reference, plus `enabled` and timestamps). */
export interface AutoReply {
  id: string;
  keyword: string;
  matchType: MatchType;
  triggerType: TriggerType;
  response: string | null;
  isMedia: boolean;
  mediaUrl: string | null;
  mediaType: AutoReplyMediaType | null;
  enabled: boolean;
  /** Why the service turned the rule off (its creator's access ended); null otherwise. */
  disabledReason: string | null;
  /** The user on whose access the rule answers (who created or last changed it); null on older rules. */
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface AutoReplyFields {
  keyword: string;
  matchType: MatchType;
  triggerType: TriggerType;
  response: string | null;
  isMedia?: boolean;
  mediaUrl: string | null;
  mediaType: AutoReplyMediaType | null;
  enabled: boolean;
}

/** `createdBy` / `by`: the caller; the rule answers only while they may operate the session. */
export type AutoReplyCreate = Partial<AutoReplyFields> & { keyword: string; createdBy: string };
export type AutoReplyUpdate = Partial<AutoReplyFields> & { id: string; by: string };

function toAutoReply(row: AutoReplyRow): AutoReply {
  const response = JSON.parse(row.response) as StoredResponse;
  return {
    id: row.id,
    keyword: row.keyword,
    matchType: row.match_type,
    triggerType: row.trigger_type,
    response: response.text ?? null,
    isMedia: response.mediaUrl !== undefined,
    mediaUrl: response.mediaUrl ?? null,
    mediaType: response.mediaType ?? null,
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason,
    createdBy: row.created_by,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

function findRow(sql: SqlStorage, id: string): AutoReplyRow | null {
  return sql.exec<AutoReplyRow>("SELECT * FROM auto_replies WHERE id = ?", id).toArray()[0] ?? null;
}

/** The whole rule after a create or an update, checked as one: the combination is what must hold. */
function validate(rule: AutoReplyFields): string | null {
  if (rule.keyword.trim() === "") return "keyword must not be blank";
  if (rule.matchType === "REGEX") {
    const problem = regexProblem(rule.keyword);
    if (problem) return problem;
  }
  if (rule.isMedia === true && rule.mediaUrl === null) return "isMedia is true but no mediaUrl is given";
  if (rule.isMedia === false && rule.mediaUrl !== null) return "isMedia is false but a mediaUrl is given";
  if ((rule.mediaUrl === null) !== (rule.mediaType === null)) return "mediaUrl and mediaType go together";
  if (rule.mediaUrl === null && !rule.response) return "Give a response text, a mediaUrl, or both";
  if (rule.mediaType === "audio" && rule.response)
    return "An audio reply cannot carry text: leave response out";
  return null;
}

function storedResponse(rule: AutoReplyFields): string {
  const response: StoredResponse = {};
  if (rule.response) response.text = rule.response;
  if (rule.mediaUrl !== null && rule.mediaType !== null) {
    response.mediaUrl = rule.mediaUrl;
    response.mediaType = rule.mediaType;
  }
  return JSON.stringify(response);
}

function newRuleId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `ar_${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

const notFound = failure(404, "Auto-reply not found");

export const autoRepliesApi = {
  /** Newest first, as the reference lists them. */
  "autoReply.list": (ctx: SessionContext, _input: Record<string, never>): Outcome<AutoReply[]> =>
    success(
      ctx.sql
        .exec<AutoReplyRow>("SELECT * FROM auto_replies ORDER BY created_at DESC, id DESC")
        .toArray()
        .map(toAutoReply),
    ),

  "autoReply.create": (ctx: SessionContext, input: AutoReplyCreate): Outcome<AutoReply> => {
    const rule: AutoReplyFields = {
      keyword: input.keyword,
      matchType: input.matchType ?? "EXACT",
      triggerType: input.triggerType ?? "ALL",
      response: input.response ?? null,
      mediaUrl: input.mediaUrl ?? null,
      mediaType: input.mediaType ?? null,
      enabled: input.enabled ?? true,
      ...(input.isMedia !== undefined ? { isMedia: input.isMedia } : {}),
    };
    const problem = validate(rule);
    if (problem) return failure(400, problem);
    const count = ctx.sql.exec<{ n: number }>("SELECT count(*) AS n FROM auto_replies").one().n;
    if (count >= MAX_AUTO_REPLIES)
      return failure(400, `A session holds at most ${MAX_AUTO_REPLIES} auto-replies`);
    const id = newRuleId();
    const now = ctx.now();
    ctx.sql.exec(
      `INSERT INTO auto_replies (id, keyword, match_type, trigger_type, response, enabled, created_by,
         created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      id,
      rule.keyword,
      rule.matchType,
      rule.triggerType,
      storedResponse(rule),
      rule.enabled ? 1 : 0,
      input.createdBy,
      now,
      now,
    );
    const row = findRow(ctx.sql, id);
    return row ? success(toAutoReply(row)) : failure(500, "The rule vanished after insert");
  },

  /**
   * Omitted fields keep their value; null clears `response` or the media. The rule now answers on the
   * access of whoever changed it; turning it on clears the reason it was turned off.
   */
  "autoReply.update": (ctx: SessionContext, input: AutoReplyUpdate): Outcome<AutoReply> => {
    const row = findRow(ctx.sql, input.id);
    if (!row) return notFound;
    const current = toAutoReply(row);
    const clearsMedia = input.mediaUrl === null || input.isMedia === false;
    const rule: AutoReplyFields = {
      keyword: input.keyword ?? current.keyword,
      matchType: input.matchType ?? current.matchType,
      triggerType: input.triggerType ?? current.triggerType,
      response: input.response === undefined ? current.response : input.response,
      mediaUrl: input.mediaUrl !== undefined ? input.mediaUrl : clearsMedia ? null : current.mediaUrl,
      mediaType: input.mediaType !== undefined ? input.mediaType : clearsMedia ? null : current.mediaType,
      enabled: input.enabled ?? current.enabled,
      ...(input.isMedia !== undefined ? { isMedia: input.isMedia } : {}),
    };
    const problem = validate(rule);
    if (problem) return failure(400, problem);
    ctx.sql.exec(
      `UPDATE auto_replies SET keyword = ?, match_type = ?, trigger_type = ?, response = ?, enabled = ?,
         created_by = ?, disabled_reason = ?, updated_at = ? WHERE id = ?`,
      rule.keyword,
      rule.matchType,
      rule.triggerType,
      storedResponse(rule),
      rule.enabled ? 1 : 0,
      input.by,
      rule.enabled ? null : row.disabled_reason,
      Math.max(ctx.now(), row.updated_at),
      row.id,
    );
    const updated = findRow(ctx.sql, row.id);
    return updated ? success(toAutoReply(updated)) : notFound;
  },

  "autoReply.delete": (ctx: SessionContext, input: { id: string }): Outcome => {
    if (!findRow(ctx.sql, input.id)) return notFound;
    ctx.sql.exec("DELETE FROM auto_replies WHERE id = ?", input.id);
    return success(null);
  },
};

/** Turns off every enabled rule answering on these users' access (theirs ended); returns how many. */
export function disableAutoRepliesBy(
  sql: SqlStorage,
  userIds: readonly string[],
  reason: string,
  now: number,
): number {
  if (userIds.length === 0) return 0;
  return sql
    .exec(
      `UPDATE auto_replies SET enabled = 0, disabled_reason = ?, updated_at = MAX(updated_at, ?)
       WHERE enabled = 1 AND ${createdByOneOf(userIds)} RETURNING id`,
      reason,
      now,
      ...userIds,
    )
    .toArray().length;
}

/** Turns one rule off, saying why. */
export function disableAutoReply(sql: SqlStorage, id: string, reason: string, now: number): void {
  sql.exec(
    "UPDATE auto_replies SET enabled = 0, disabled_reason = ?, updated_at = MAX(updated_at, ?) WHERE id = ?",
    reason,
    now,
    id,
  );
}

/** Enabled rules, oldest first: when several match a message, the first one written answers. */
export function enabledRules(sql: SqlStorage): AutoReply[] {
  return sql
    .exec<AutoReplyRow>("SELECT * FROM auto_replies WHERE enabled = 1 ORDER BY created_at, id")
    .toArray()
    .map(toAutoReply);
}

/**
 * The auto-reply that answers `text` in `chat`: the first enabled match whose creator may still operate
 * the session, all within one message's matching budget. A match whose creator lost access is turned
 * off, with the reason, and the search goes on with what is left of the budget. When D1 cannot say,
 * nothing answers: a reply on the owner's number needs someone's access.
 */
export async function answeringRule(
  ctx: SessionContext,
  chat: string,
  text: string,
): Promise<RuleSearch<AutoReply>> {
  const deadline = Date.now() + AUTO_REPLY_BUDGET_MS;
  for (;;) {
    const search = await firstMatch(enabledRules(ctx.sql), chat, text, Math.max(0, deadline - Date.now()));
    if (!search.rule) return search;
    let allowed: boolean;
    try {
      allowed = await mayStillOperate(ctx, search.rule.createdBy);
    } catch (error) {
      console.error(JSON.stringify({ msg: "auto-reply skipped: access not checked", error: String(error) }));
      return { rule: null, tried: search.tried, skipped: 0 };
    }
    if (allowed) return search;
    disableAutoReply(ctx.sql, search.rule.id, CREATOR_WITHOUT_ACCESS_RULE, ctx.now());
  }
}

/** What to send for a matched rule; a document is named after the last segment of its URL. */
export function replyContent(rule: AutoReply): OutgoingContent | null {
  if (rule.mediaUrl === null || rule.mediaType === null) {
    return rule.response ? { type: "text", text: rule.response } : null;
  }
  return contentFromUrl(rule.mediaType, rule.mediaUrl, rule.response);
}
