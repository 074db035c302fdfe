import { eq } from "drizzle-orm";
import type { ActorRef } from "../../core/actor";
import type { Db } from "../../db/client";
import { type AgentRow, agents, type HeartbeatRunRow } from "../../db/schema";
import { wakeRun } from "./wake";

/**
 * @-mentions in comment bodies. Two forms wake an agent of the issue's company:
 * - `@Name`: the agent's name, case-insensitively, ending at a word boundary. Names may contain
 *   spaces, so the longest name that fits wins (`@Ada Lovelace` is not `@Ada` when both exist).
 * - `[@Name](agent://<agentId>)`: the structured link; the id decides, the label is only text.
 * Code (fenced blocks and inline spans) is quoted text, not an address: mentions there are ignored.
 */

const FENCED_CODE = /(^|\n)[ \t]*(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:\n[ \t]*\2[^\n]*(?=\n|$)|$)/g;
const INLINE_CODE = /(?<!`)(`+)(?!`)[\s\S]*?[^`]\1(?!`)/g;
const AGENT_LINK = /\[@[^\]\n]*\]\(agent:\/\/([^)\s?#]+)(?:[?#][^)\s]*)?\)/g;
const WORD_CHAR = /[\p{L}\p{N}_]/u;

/** The body with code blanked out (kept the same length, so nothing else shifts). */
export function withoutCode(body: string): string {
  const blank = (match: string) => match.replace(/[^\n]/g, " ");
  return body.replace(FENCED_CODE, blank).replace(INLINE_CODE, blank);
}

export interface MentionCandidate {
  id: string;
  name: string;
}

const isWordChar = (char: string | undefined) => char !== undefined && WORD_CHAR.test(char);

/** Plain `@Name` mentions: at each `@` not glued to a preceding word (emails), the longest name. */
function plainMentions(text: string, byLength: ReadonlyArray<{ id: string; key: string }>): string[] {
  const found: string[] = [];
  for (let at = text.indexOf("@"); at !== -1; at = text.indexOf("@", at + 1)) {
    if (isWordChar(text[at - 1])) continue;
    const rest = text.slice(at + 1, at + 1 + (byLength[0]?.key.length ?? 0)).toLowerCase();
    const hit = byLength.find(
      (candidate) => rest.startsWith(candidate.key) && !isWordChar(text[at + 1 + candidate.key.length]),
    );
    if (hit) found.push(hit.id);
  }
  return found;
}

/**
 * Ids of the candidates the body mentions, each once, in order of first mention. Structured links
 * count only for ids among the candidates (the issue's company), so another company's id does nothing.
 */
export function mentionedIds(body: string, candidates: readonly MentionCandidate[]): string[] {
  if (!body.includes("@") || candidates.length === 0) return [];
  const known = new Set(candidates.map((candidate) => candidate.id));
  const ids: string[] = [];
  const text = withoutCode(body).replace(AGENT_LINK, (match, id: string) => {
    if (known.has(id)) ids.push(id);
    return " ".repeat(match.length);
  });
  const byLength = candidates
    .map((candidate) => ({ id: candidate.id, key: candidate.name.toLowerCase() }))
    .filter((candidate) => candidate.key.length > 0)
    .sort((a, b) => b.key.length - a.key.length);
  ids.push(...plainMentions(text, byLength));
  return [...new Set(ids)];
}

/** The company's agents, when the body could mention one at all (no `@`, no query). */
export async function mentionCandidates(
  db: Db,
  companyId: string,
  body: string | undefined,
): Promise<AgentRow[]> {
  return (await mentionCandidatesRead(db, companyId, body)) ?? [];
}

/** The same read unsent, to join a batch of reads (db/read-batch.ts); null when nothing to ask. */
export const mentionCandidatesRead = (db: Db, companyId: string, body: string | undefined) =>
  body?.includes("@") ? db.select().from(agents).where(eq(agents.companyId, companyId)) : null;

/**
 * One heartbeat-run row per mentioned agent, never the author. `wakeRun` records a refused wake
 * (paused, terminated, pending, over budget) as cancelled with its reason.
 */
export function mentionWakes(
  body: string,
  companyAgents: readonly AgentRow[],
  context: { issueId: string; commentId: string; author: ActorRef; now: number },
): HeartbeatRunRow[] {
  const authorId = context.author.type === "agent" ? context.author.agentId : null;
  const byId = new Map(companyAgents.map((agent) => [agent.id, agent]));
  return mentionedIds(body, companyAgents)
    .filter((id) => id !== authorId)
    .flatMap((id) => {
      const agent = byId.get(id);
      if (!agent) return [];
      const wake = {
        source: "mention",
        reason: "issue_comment_mentioned",
        issueId: context.issueId,
        commentId: context.commentId,
        requestedBy: context.author,
      };
      return [wakeRun(agent, wake, context.now)];
    });
}
