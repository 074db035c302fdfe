import { and, eq, isNull } from "drizzle-orm";
import { type ActorRef, authorColumns } from "../../core/actor";
import type { Db } from "../../db/client";
import { iso, newId } from "../../db/client";
import {
  type AgentRow,
  agents,
  type HeartbeatRunRow,
  type IssueQuestionRow,
  type IssueRow,
  issueQuestions,
  issues,
} from "../../db/schema";
import { conflict, notFound } from "../../http/errors";
import { type ActorNames, actorNames, nameOf } from "../shared";
import { commentedAssignee, wakeInsert, wakeRun } from "../wakes";
import type { IssueOpHandler } from "./operations";
import { commitBatch, issueActivity } from "./store";

/**
 * Questions on an issue: someone (usually the assignee agent) needs an answer before the work can go
 * on. A pending question is a reason to sit in `blocked` (see blockers.ts); the answer wakes the agent
 * that asked. A board user's question wakes the assignee agent, who is the one expected to answer.
 */

/** Everyone who asked or answered these questions, by name, in one lookup. */
export const questionNames = (
  db: Db,
  companyId: string,
  rows: readonly IssueQuestionRow[],
): Promise<ActorNames> =>
  actorNames(db, companyId, {
    userIds: rows.flatMap((row) => [row.askedByUserId, row.answeredByUserId]),
    agentIds: rows.flatMap((row) => [row.askedByAgentId, row.answeredByAgentId]),
  });

export const questionResource = (row: IssueQuestionRow, names: ActorNames) => ({
  id: row.id,
  issueId: row.issueId,
  companyId: row.companyId,
  body: row.body,
  askedByAgentId: row.askedByAgentId,
  askedByUserId: row.askedByUserId,
  askedByName: nameOf(names, row.askedByUserId, row.askedByAgentId),
  status: row.answeredAt === null ? ("pending" as const) : ("answered" as const),
  answer: row.answer,
  answeredByAgentId: row.answeredByAgentId,
  answeredByUserId: row.answeredByUserId,
  answeredByName: nameOf(names, row.answeredByUserId, row.answeredByAgentId),
  answeredAt: row.answeredAt === null ? null : iso(row.answeredAt),
  answeredVia: row.answeredVia,
  createdAt: iso(row.createdAt),
});

export const QUESTION_NOT_FOUND = "Question not found";

export async function hasPendingQuestion(db: Db, issueId: string): Promise<boolean> {
  const row = await db
    .select({ id: issueQuestions.id })
    .from(issueQuestions)
    .where(and(eq(issueQuestions.issueId, issueId), isNull(issueQuestions.answeredAt)))
    .get();
  return row !== undefined;
}

export const questionsOf = (db: Db, issueId: string) =>
  db
    .select()
    .from(issueQuestions)
    .where(eq(issueQuestions.issueId, issueId))
    .orderBy(issueQuestions.createdAt, issueQuestions.id);

const questionDetails = (issue: IssueRow, questionId: string) => ({
  questionId,
  identifier: issue.identifier,
});

function askedWake(assignee: AgentRow | null, issue: IssueRow, actor: ActorRef, now: number) {
  if (!assignee || actor.type !== "board") return null;
  const wake = { source: "comment", reason: "issue_question_asked", issueId: issue.id, requestedBy: actor };
  return wakeRun(assignee, wake, now);
}

/** POST /issues/:id/questions. */
export const askQuestion: IssueOpHandler<"askQuestion"> = async ({ db, issue, op, now }) => {
  const asker = authorColumns(op.actor);
  const question: IssueQuestionRow = {
    id: newId(),
    companyId: issue.companyId,
    issueId: issue.id,
    body: op.input.body,
    askedByAgentId: asker.agentId,
    askedByUserId: asker.userId,
    answer: null,
    answeredByAgentId: null,
    answeredByUserId: null,
    answeredAt: null,
    answeredVia: null,
    createdAt: now,
  };
  const wake = askedWake(await commentedAssignee(db, issue), issue, op.actor, now);
  await commitBatch(db, [
    db.insert(issueQuestions).values(question),
    ...(wake ? [wakeInsert(db, wake)] : []),
    issueActivity(db, issue, op.actor, "issue.question_asked", questionDetails(issue, question.id), now),
    db.update(issues).set({ updatedAt: now }).where(eq(issues.id, issue.id)),
  ]);
  return {
    status: 201,
    body: questionResource(question, await questionNames(db, issue.companyId, [question])),
    queuedRuns: wake?.status === "queued",
  };
};

/** The agent that asked, woken by the answer unless it answered itself or the question was a person's. */
async function answeredWake(
  db: Db,
  question: IssueQuestionRow,
  actor: ActorRef,
  now: number,
): Promise<HeartbeatRunRow | null> {
  if (question.askedByAgentId === null) return null;
  if (actor.type === "agent" && actor.agentId === question.askedByAgentId) return null;
  const asker = await db
    .select()
    .from(agents)
    .where(and(eq(agents.id, question.askedByAgentId), eq(agents.companyId, question.companyId)))
    .get();
  if (!asker) return null;
  const wake = {
    source: "comment",
    reason: "issue_question_answered",
    issueId: question.issueId,
    requestedBy: actor,
  };
  return wakeRun(asker, wake, now);
}

/** POST /issues/:id/questions/:questionId/answer: once; a second answer is a 409 that changes nothing. */
export const answerQuestion: IssueOpHandler<"answerQuestion"> = async ({ db, issue, op, now }) => {
  const question = await db
    .select()
    .from(issueQuestions)
    .where(and(eq(issueQuestions.id, op.questionId), eq(issueQuestions.issueId, issue.id)))
    .get();
  if (!question) throw notFound(QUESTION_NOT_FOUND);
  if (question.answeredAt !== null) throw conflict("The question is already answered");
  const answerer = authorColumns(op.actor);
  const answered: IssueQuestionRow = {
    ...question,
    answer: op.input.answer,
    answeredByAgentId: answerer.agentId,
    answeredByUserId: answerer.userId,
    answeredAt: now,
    answeredVia: op.via ?? null,
  };
  const wake = await answeredWake(db, question, op.actor, now);
  await commitBatch(db, [
    db
      .update(issueQuestions)
      .set({
        answer: answered.answer,
        answeredByAgentId: answered.answeredByAgentId,
        answeredByUserId: answered.answeredByUserId,
        answeredAt: now,
        answeredVia: answered.answeredVia,
      })
      .where(and(eq(issueQuestions.id, question.id), isNull(issueQuestions.answeredAt))),
    ...(wake ? [wakeInsert(db, wake)] : []),
    issueActivity(
      db,
      issue,
      op.actor,
      "issue.question_answered",
      { ...questionDetails(issue, question.id), ...(op.via ? { via: op.via } : {}) },
      now,
    ),
    db.update(issues).set({ updatedAt: now }).where(eq(issues.id, issue.id)),
  ]);
  return {
    status: 200,
    body: questionResource(answered, await questionNames(db, issue.companyId, [answered])),
    queuedRuns: wake?.status === "queued",
  };
};
