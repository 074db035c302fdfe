import { createRoute, z } from "@hono/zod-openapi";
import { refOf } from "../../../core/actor";
import {
  controlAuth,
  controlError,
  controlErrors,
  createRouter,
  json,
  jsonBody,
} from "../../../http/openapi";
import { announceFrom, queueQuestionNotices } from "../../line";
import { controlContext } from "../../shared";
import { questionNames, questionResource, questionsOf } from "../questions";
import { AskQuestionBodySchema, IssueParamSchema, QuestionText } from "../schemas";
import { findVisibleIssue } from "../store";
import { mutateIssue } from "./call";
import { issueOpResponse } from "./checkout";

/** Questions on an issue and their answers. Mounted at /api. */
export const issueQuestionRoutes = createRouter();
const tags = ["Issues"];

const QuestionSchema = z
  .object({
    id: z.string(),
    issueId: z.string(),
    companyId: z.string(),
    body: z.string(),
    askedByAgentId: z.string().nullable(),
    askedByUserId: z.string().nullable(),
    askedByName: z
      .string()
      .nullable()
      .openapi({ description: "Who asked, by display name (person or agent)" }),
    status: z.enum(["pending", "answered"]),
    answer: z.string().nullable(),
    answeredByAgentId: z.string().nullable(),
    answeredByUserId: z.string().nullable(),
    answeredByName: z.string().nullable().openapi({ description: "Who answered, by display name" }),
    answeredAt: z.string().nullable(),
    answeredVia: z
      .enum(["whatsapp"])
      .nullable()
      .openapi({ description: "`whatsapp` when a member answered on the company's line; null otherwise" }),
    createdAt: z.string(),
  })
  .openapi("IssueQuestion");

const AnswerBodySchema = z.strictObject({ answer: QuestionText }).openapi("AnswerQuestionBody");
const QuestionParamSchema = IssueParamSchema.extend({ questionId: z.string().min(1).max(100) });

issueQuestionRoutes.openapi(
  createRoute({
    method: "get",
    path: "/issues/{issueId}/questions",
    tags,
    summary: "The issue's questions, oldest first, pending and answered",
    security: controlAuth,
    request: { params: IssueParamSchema },
    responses: { 200: json(z.array(QuestionSchema), "Questions"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const issue = await findVisibleIssue(db, actor, c.req.valid("param").issueId);
    const rows = await questionsOf(db, issue.id);
    const names = await questionNames(db, issue.companyId, rows);
    return c.json(
      rows.map((row) => questionResource(row, names)),
      200,
    );
  },
);

issueQuestionRoutes.openapi(
  createRoute({
    method: "post",
    path: "/issues/{issueId}/questions",
    tags,
    summary: "Ask a question on the issue",
    description:
      "A pending question is a reason the issue may enter `blocked`. A board user's question wakes the " +
      "assignee agent (reason issue_question_asked); an agent's question waits for a person.",
    security: controlAuth,
    request: { params: IssueParamSchema, ...jsonBody(AskQuestionBodySchema) },
    responses: { 201: json(QuestionSchema, "Asked"), ...controlErrors },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const issue = await findVisibleIssue(db, actor, c.req.valid("param").issueId);
    const input = c.req.valid("json");
    const asked = await mutateIssue(c, issue, { kind: "askQuestion", actor: refOf(actor), input });
    // An agent's question reaches the person it asks on the company's line (control/line).
    if (actor.type === "agent" && asked.status === 201) {
      const { id } = (await asked.clone().json()) as { id: string };
      await announceFrom(c, issue.companyId, async (tx, origin, at) => {
        const question = (await questionsOf(tx, issue.id)).find((row) => row.id === id);
        return question ? queueQuestionNotices(tx, question, origin, at) : 0;
      });
    }
    return issueOpResponse(Promise.resolve(asked));
  },
);

issueQuestionRoutes.openapi(
  createRoute({
    method: "post",
    path: "/issues/{issueId}/questions/{questionId}/answer",
    tags,
    summary: "Answer a pending question (once)",
    description:
      "Exactly one answer wins; answering an answered question is **409** and changes nothing. The " +
      "agent that asked is woken (reason issue_question_answered) unless it answered itself.",
    security: controlAuth,
    request: { params: QuestionParamSchema, ...jsonBody(AnswerBodySchema) },
    responses: {
      200: json(QuestionSchema, "Answered"),
      ...controlErrors,
      409: controlError("The question is already answered; nothing changed"),
    },
  }),
  async (c) => {
    const { actor, db } = controlContext(c);
    const { issueId, questionId } = c.req.valid("param");
    const issue = await findVisibleIssue(db, actor, issueId);
    const input = c.req.valid("json");
    return issueOpResponse(
      mutateIssue(c, issue, {
        kind: "answerQuestion",
        actor: refOf(actor),
        questionId,
        input,
        ...(c.get("answeredVia") ? { via: c.get("answeredVia") } : {}),
      }),
    );
  },
);
