import { and, eq } from "drizzle-orm";
import { issues, notifications } from "../../../db/schema";
import { type AnswerContext, type AnswerResult, errorOf } from "./context";
import { questionAnswer } from "./intent";

/**
 * A reply quoting a mention or assignment notice is a comment on its issue, posted through the
 * comments route as the member: the same role rules (a viewer may not comment), the same mentions and
 * wakes as a comment written on the dashboard. A vote or a reaction says nothing to post.
 */

export const MENTION_HELP =
  "Not understood, nothing changed. Reply to the message with your comment as text.";

export async function answerMention(ctx: AnswerContext): Promise<AnswerResult> {
  if (ctx.inbound.kind !== "reply") return { outcome: "ignored", detail: "not a reply", reply: null };
  const issue = await ctx.db
    .select({ id: issues.id, identifier: issues.identifier })
    .from(notifications)
    .innerJoin(issues, eq(issues.id, notifications.issueId))
    .where(and(eq(notifications.id, ctx.notice.subjectId), eq(notifications.companyId, ctx.companyId)))
    .get();
  if (!issue)
    return {
      outcome: "refused",
      detail: "issue gone",
      reply: "That issue no longer exists, nothing changed.",
    };
  const body = questionAnswer(ctx.inbound);
  if (body === null) return { outcome: "not_understood", detail: null, reply: MENTION_HELP };

  const posted = await ctx.asMember("POST", `/api/issues/${encodeURIComponent(issue.id)}/comments`, { body });
  if (posted.status === 201)
    return {
      outcome: "applied",
      detail: "commented",
      reply: `Commented on ${issue.identifier} — recorded for ${ctx.member.name}.`,
    };
  if (posted.status >= 500) throw new Error(`comment: ${errorOf(posted)}`);
  const why = errorOf(posted);
  return { outcome: "refused", detail: why, reply: `Not applied, nothing changed: ${why}.` };
}
