// Questions on an issue: a pending one lets the issue enter `blocked`, the answer wakes the agent that
// asked, a board user's question wakes the assignee, and only one answer ever wins.
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { seedIssue } from "../helpers";
import { actionsOf, type ErrorBody, issueRow, patchIssue, rowsOf, wakesOf, world } from "./fixtures";

interface Question {
  id: string;
  issueId: string;
  body: string;
  status: "pending" | "answered";
  askedByAgentId: string | null;
  askedByUserId: string | null;
  answer: string | null;
  answeredByUserId: string | null;
  answeredAt: string | null;
}

const ask = (headers: Record<string, string>, issueId: string, body: unknown) =>
  call<Question & ErrorBody>("POST", `/api/issues/${issueId}/questions`, { headers, body });
const answer = (headers: Record<string, string>, issueId: string, questionId: string, body: unknown) =>
  call<Question & ErrorBody>("POST", `/api/issues/${issueId}/questions/${questionId}/answer`, {
    headers,
    body,
  });
const questionRows = (issueId: string) =>
  rowsOf<{ answer: string | null; answered_at: number | null }>(
    "SELECT answer, answered_at FROM issue_questions WHERE issue_id = ?",
    issueId,
  );

describe("issue questions", () => {
  it("an agent's pending question lets its issue enter blocked; the answer wakes that agent", async () => {
    const { owner, company, engineer } = await world();
    const issue = await seedIssue(company, { assigneeAgentId: engineer.id, status: "in_progress" });
    const refused = await patchIssue<ErrorBody>(engineer.headers, issue.id, { status: "blocked" });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatch(/pending question/);

    const asked = await ask(engineer.headers, issue.id, { body: "Which region do we launch in?" });
    expect(asked.status).toBe(201);
    expect(asked.body).toMatchObject({ status: "pending", askedByAgentId: engineer.id, answer: null });
    // An agent's question waits for a person: nobody is woken.
    expect(await wakesOf(issue.id)).toEqual([]);
    const blocked = await patchIssue(engineer.headers, issue.id, { status: "blocked" });
    expect(blocked.status).toBe(200);
    expect((await issueRow(issue.id))?.status).toBe("blocked");

    const answered = await answer(owner.headers, issue.id, asked.body.id, { answer: "EU first." });
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({
      status: "answered",
      answer: "EU first.",
      answeredByUserId: owner.userId,
    });
    expect(await wakesOf(issue.id)).toEqual([
      expect.objectContaining({
        agent_id: engineer.id,
        status: "queued",
        wake_reason: "issue_question_answered",
      }),
    ]);
    const listed = await call<Question[]>("GET", `/api/issues/${issue.id}/questions`, {
      headers: engineer.headers,
    });
    expect(listed.body.map((q) => [q.body, q.status, q.answer])).toEqual([
      ["Which region do we launch in?", "answered", "EU first."],
    ]);
    expect(await actionsOf(issue.id)).toEqual(
      expect.arrayContaining(["issue.question_asked", "issue.question_answered"]),
    );
  });

  it("a board user's question wakes the assignee agent, whose own answer wakes nobody", async () => {
    const { owner, company, engineer } = await world();
    const issue = await seedIssue(company, { assigneeAgentId: engineer.id });
    const asked = await ask(owner.headers, issue.id, { body: "How long will this take?" });
    expect(asked.status).toBe(201);
    expect(await wakesOf(issue.id)).toEqual([
      expect.objectContaining({ agent_id: engineer.id, wake_reason: "issue_question_asked" }),
    ]);
    expect((await answer(engineer.headers, issue.id, asked.body.id, { answer: "A day." })).status).toBe(200);
    expect(await wakesOf(issue.id)).toHaveLength(1);
  });

  it("exactly one of simultaneous answers wins; the others are 409 and change nothing", async () => {
    const { owner, company, engineer, peer } = await world();
    const issue = await seedIssue(company, { assigneeAgentId: engineer.id });
    const asked = await ask(engineer.headers, issue.id, { body: "Ship on Friday?" });
    const answers = await Promise.all(
      ["yes", "no", "maybe", "later"].map((text, i) =>
        answer(i % 2 === 0 ? owner.headers : peer.headers, issue.id, asked.body.id, { answer: text }),
      ),
    );
    expect(answers.map((res) => res.status).sort()).toEqual([200, 409, 409, 409]);
    const winner = answers.find((res) => res.status === 200);
    const rows = await questionRows(issue.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.answer).toBe(winner?.body.answer);
    expect(
      (await wakesOf(issue.id)).filter((wake) => wake.wake_reason === "issue_question_answered"),
    ).toHaveLength(1);
  });

  it("bad bodies are 400, unknown questions 404, other companies' issues 404; nothing is written", async () => {
    const { owner, company, engineer } = await world();
    const theirs = await world();
    const issue = await seedIssue(company, { assigneeAgentId: engineer.id });
    for (const body of [{}, { body: "" }, { body: "   " }, { body: 7 }, { body: "x", extra: 1 }]) {
      expect((await ask(owner.headers, issue.id, body)).status).toBe(400);
    }
    expect((await ask(theirs.owner.headers, issue.id, { body: "Hi?" })).status).toBe(404);
    expect((await answer(owner.headers, issue.id, crypto.randomUUID(), { answer: "x" })).status).toBe(404);
    const asked = await ask(owner.headers, issue.id, { body: "Mine?" });
    expect((await answer(theirs.owner.headers, issue.id, asked.body.id, { answer: "x" })).status).toBe(404);
    const foreignIssue = await seedIssue(theirs.company);
    expect((await answer(theirs.owner.headers, foreignIssue.id, asked.body.id, { answer: "x" })).status).toBe(
      404,
    );
    expect((await answer(owner.headers, issue.id, asked.body.id, { answer: "" })).status).toBe(400);
    expect(await questionRows(issue.id)).toEqual([{ answer: null, answered_at: null }]);
  });
});
