import type { Inbound } from "./inbound";

/**
 * What a member meant, read strictly: the poll's own options, the documented reply words, 👍 and 👎.
 * Anything else is `unclear` (the line sends a short help reply), never a guess.
 */
export type Decision = "approve" | "reject" | "changes";
export type ApprovalIntent =
  | { act: Decision; note: string | null }
  | { act: "withdrawn" } // an un-vote or a removed reaction: nothing to do
  | { act: "unclear" };

/** The poll options an approval notice is sent with, in order. */
export const APPROVAL_OPTIONS = ["Approve", "Reject", "Ask for changes"] as const;

const WORDS: ReadonlyArray<[RegExp, Decision]> = [
  [/^(?:approve|approved)\b/i, "approve"],
  [/^(?:reject|rejected)\b/i, "reject"],
  [/^(?:ask for changes|changes)\b/i, "changes"],
];

/** `approve`, `reject <reason>`, `changes <note>` (and the poll's option words), any case. */
function replyIntent(text: string): ApprovalIntent {
  const trimmed = text.trim();
  for (const [word, act] of WORDS) {
    const match = word.exec(trimmed);
    if (!match) continue;
    const note = trimmed
      .slice(match[0].length)
      .replace(/^[\s:,.\-–—]+/, "")
      .trim();
    return { act, note: note === "" ? null : note };
  }
  return { act: "unclear" };
}

/** 👍 / 👎 in any skin tone; an empty emoji is a reaction taken back. */
function reactionIntent(emoji: string): ApprovalIntent {
  const bare = emoji.replace(/[\u{1F3FB}-\u{1F3FF}\uFE0F]/gu, "");
  if (bare === "") return { act: "withdrawn" };
  if (bare === "👍") return { act: "approve", note: null };
  if (bare === "👎") return { act: "reject", note: null };
  return { act: "unclear" };
}

function voteIntent(options: string[]): ApprovalIntent {
  if (options.length === 0) return { act: "withdrawn" };
  if (options.length !== 1) return { act: "unclear" };
  const intent = replyIntent(options[0] ?? "");
  return intent.act === "unclear" ? intent : { act: intent.act, note: null };
}

export function approvalIntent(inbound: Inbound): ApprovalIntent {
  switch (inbound.kind) {
    case "reply":
      return replyIntent(inbound.text);
    case "reaction":
      return reactionIntent(inbound.emoji);
    case "vote":
      return voteIntent(inbound.options);
  }
}

/** A question's answer is the text of a reply quoting it; a vote or a reaction answers nothing. */
export function questionAnswer(inbound: Inbound): string | null {
  if (inbound.kind !== "reply") return null;
  const text = inbound.text.trim();
  return text === "" ? null : text;
}

export const APPROVAL_HELP =
  "Not understood, nothing changed. Vote in the poll, or reply to it with: approve, reject <reason>, or changes <note>.";
export const QUESTION_HELP =
  "Not understood, nothing changed. Reply to the question with your answer as text.";
