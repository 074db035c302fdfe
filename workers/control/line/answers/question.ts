import { and, eq } from "drizzle-orm";
import { agents, issueQuestions, users } from "../../../db/schema";
import { type AnswerContext, type AnswerResult, errorOf, whenText } from "./context";
import { QUESTION_HELP, questionAnswer } from "./intent";

/**
 * A reply quoting a question's notice is its answer, given through the questions answer route as the
 * member: the asking agent wakes as it does for an answer from the dashboard.
 */

async function alreadyAnswered(ctx: AnswerContext, questionId: string): Promise<AnswerResult> {
  const row = await ctx.db
    .select({ at: issueQuestions.answeredAt, name: users.name })
    .from(issueQuestions)
    .leftJoin(users, eq(users.id, issueQuestions.answeredByUserId))
    .where(eq(issueQuestions.id, questionId))
    .get();
  const by = row?.name ? ` by ${row.name}` : "";
  const at = row?.at ? ` at ${whenText(row.at)}` : "";
  return {
    outcome: "already_decided",
    detail: "answered",
    reply: `Already answered${by}${at}, nothing changed.`,
  };
}

export async function answerQuestion(ctx: AnswerContext): Promise<AnswerResult> {
  const question = await ctx.db
    .select()
    .from(issueQuestions)
    .where(and(eq(issueQuestions.id, ctx.notice.subjectId), eq(issueQuestions.companyId, ctx.companyId)))
    .get();
  if (!question) return { outcome: "ignored", detail: "question not found", reply: null };
  const text = questionAnswer(ctx.inbound);
  if (text === null) return { outcome: "not_understood", detail: null, reply: QUESTION_HELP };
  if (question.answeredAt !== null) return alreadyAnswered(ctx, question.id);

  const path = `/api/issues/${encodeURIComponent(question.issueId)}/questions/${encodeURIComponent(question.id)}/answer`;
  const answer = await ctx.asMember("POST", path, { answer: text });
  if (answer.status === 200) {
    const asker = question.askedByAgentId
      ? await ctx.db
          .select({ name: agents.name })
          .from(agents)
          .where(eq(agents.id, question.askedByAgentId))
          .get()
      : undefined;
    const whose = asker ? `${asker.name}'s question` : "the question";
    return {
      outcome: "applied",
      detail: "answered",
      reply: `Answered ${whose} — recorded for ${ctx.member.name}.`,
    };
  }
  if (answer.status === 409) return alreadyAnswered(ctx, question.id);
  if (answer.status >= 500) throw new Error(`question answer: ${errorOf(answer)}`);
  const why = errorOf(answer);
  return { outcome: "refused", detail: why, reply: `Not applied, nothing changed: ${why}.` };
}
