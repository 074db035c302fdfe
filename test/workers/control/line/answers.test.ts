// What comes back on the company's line (issue 28): a member's vote, quoted reply or reaction to a
// notice, applied as that member through the dashboard's routes, once; refusals with a reply saying
// why; strangers and unverified numbers ignored. Votes, replies and reactions enter the real SessionDO
// from its fake bridge as the bridge reports them.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { browse, textOf } from "../../dashboard/helpers";
import { call, createUser } from "../../helpers";
import { personJid } from "../../mcp/whatsapp-line";
import { eventually } from "../../patience";
import { addMembership } from "../helpers";
import {
  answerRow,
  approvalRow,
  decisionsOf,
  lineWithOwner,
  member,
  notice,
  pendingApproval,
  pendingQuestion,
  react,
  replayVote,
  reply,
  replyTo,
  textsTo,
  vote,
} from "./answers-world";

const wakesOf = (agentId: string, reason: string) =>
  env.DB.prepare("SELECT status FROM heartbeat_runs WHERE agent_id = ? AND wake_reason = ?")
    .bind(agentId, reason)
    .all()
    .then((r) => r.results);

const statusIs = (approvalId: string, status: string) => async () =>
  (await approvalRow(approvalId))?.status === status;

describe("approvals answered on the line", () => {
  it("a vote Approve approves as the member, via WhatsApp, wakes the requester and confirms quoting", async () => {
    const { line, owner } = await lineWithOwner("Olivia");
    const approvalId = await pendingApproval(line);
    const pollId = await notice(line, owner, { type: "approval", id: approvalId });

    await vote(line, owner, pollId, ["Approve"]);

    expect(await approvalRow(approvalId)).toMatchObject({
      status: "approved",
      decided_by_user_id: owner.user.userId,
    });
    const decisions = await decisionsOf(approvalId);
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({
      action: "approval.approved",
      actor_type: "user",
      actor_id: owner.user.userId,
    });
    expect(decisions[0]?.details.via).toBe("whatsapp");
    expect(await wakesOf(line.agent.id, "approval_approved")).toHaveLength(1);
    const confirmation = await replyTo(line, owner, "Approved budget raise to $500");
    expect(confirmation.text).toContain("recorded for Olivia");
    expect(confirmation.quoted).toBe(pollId);
  });

  it("a reply `reject too expensive` rejects with the note and confirms quoting the reply", async () => {
    const { line, owner } = await lineWithOwner();
    const approvalId = await pendingApproval(line);
    const pollId = await notice(line, owner, { type: "approval", id: approvalId });

    const replyId = await reply(line, owner, pollId, "Reject too expensive");

    await eventually(statusIs(approvalId, "rejected"));
    expect(await approvalRow(approvalId)).toMatchObject({ decision_note: "too expensive" });
    expect((await decisionsOf(approvalId))[0]).toMatchObject({
      action: "approval.rejected",
      details: { decisionNote: "too expensive", via: "whatsapp" },
    });
    const confirmation = await replyTo(line, owner, "Rejected budget raise to $500");
    expect(confirmation.quoted).toBe(replyId);
  });

  it("a 👎 reaction rejects; `changes <note>` on another sends it back for revision", async () => {
    const { line, owner } = await lineWithOwner();
    const rejected = await pendingApproval(line);
    await react(line, owner, await notice(line, owner, { type: "approval", id: rejected }), "👎🏽");
    await eventually(statusIs(rejected, "rejected"));

    const revised = await pendingApproval(line);
    await reply(
      line,
      owner,
      await notice(line, owner, { type: "approval", id: revised }),
      "CHANGES: cap it at $300",
    );
    await eventually(statusIs(revised, "revision_requested"));
    expect(await approvalRow(revised)).toMatchObject({ decision_note: "cap it at $300" });
  });

  it("text that cannot be understood gets a short help reply and changes nothing", async () => {
    const { line, owner } = await lineWithOwner();
    const approvalId = await pendingApproval(line);
    const pollId = await notice(line, owner, { type: "approval", id: approvalId });

    const replyId = await reply(line, owner, pollId, "maybe later?");

    const help = await replyTo(line, owner, "Not understood");
    expect(help.text).toContain("approve, reject <reason>, or changes <note>");
    expect(help.quoted).toBe(replyId);
    expect((await approvalRow(approvalId))?.status).toBe("pending");
    expect(await answerRow(line.company.id, replyId)).toMatchObject({ outcome: "not_understood" });
  });

  it("a viewer's vote is refused with a reply saying why; the approval stays pending", async () => {
    const { line } = await lineWithOwner();
    const viewer = await member(line, "Vera", { role: "viewer" });
    const approvalId = await pendingApproval(line);
    const pollId = await notice(line, viewer, { type: "approval", id: approvalId });

    const voteId = await vote(line, viewer, pollId, ["Approve"]);

    const refusal = await replyTo(line, viewer, "Not applied");
    expect(refusal.text).toContain("Viewers of this company may read but not change anything");
    expect(await approvalRow(approvalId)).toMatchObject({ status: "pending", decided_by_user_id: null });
    expect(await decisionsOf(approvalId)).toEqual([]);
    expect(await answerRow(line.company.id, voteId)).toMatchObject({ outcome: "refused" });
  });

  it("a removed member's reply is refused: access ended, nothing changed", async () => {
    const { line } = await lineWithOwner();
    const gone = await member(line, "Gus");
    const approvalId = await pendingApproval(line);
    const pollId = await notice(line, gone, { type: "approval", id: approvalId });
    await env.DB.prepare("DELETE FROM company_memberships WHERE company_id = ? AND user_id = ?")
      .bind(line.company.id, gone.user.userId)
      .run();

    const replyId = await reply(line, gone, pollId, "approve");

    const refusal = await replyTo(line, gone, "has ended");
    expect(refusal.text).toBe(`Your access to ${line.company.name} has ended, so nothing was changed.`);
    expect((await approvalRow(approvalId))?.status).toBe("pending");
    expect(await answerRow(line.company.id, replyId)).toMatchObject({
      outcome: "refused",
      detail: "access ended",
    });
  });

  it("an unverified number and a stranger quoting a notice are ignored and recorded, with no reply", async () => {
    const { line, owner } = await lineWithOwner();
    const unverified = await member(line, "Una", { verified: false });
    const approvalId = await pendingApproval(line);
    const pollId = await notice(line, owner, { type: "approval", id: approvalId });
    const stranger = personJid();

    const fromUnverified = await reply(line, unverified, pollId, "approve");
    const fromStranger = await reply(line, stranger, pollId, "approve");
    const strangerVote = await vote(
      line,
      { ...unverified, jid: stranger, phone: stranger.split("@")[0] ?? "" },
      pollId,
      ["Approve"],
    );

    await eventually(async () => (await answerRow(line.company.id, fromStranger)) !== null);
    await eventually(async () => (await answerRow(line.company.id, fromUnverified)) !== null);
    for (const id of [fromUnverified, fromStranger, strangerVote])
      expect(await answerRow(line.company.id, id)).toMatchObject({ outcome: "ignored" });
    expect((await approvalRow(approvalId))?.status).toBe("pending");
    expect(line.sent(stranger)).toEqual([]);
    expect(textsTo(line, unverified)).toEqual([]);
  });

  it("a member WhatsApp names only by LID is matched through the pair the session learned", async () => {
    const { line, owner } = await lineWithOwner();
    const approvalId = await pendingApproval(line);
    const pollId = await notice(line, owner, { type: "approval", id: approvalId });
    const lid = `${owner.phone.slice(-9)}7701@lid`;
    const unknownLid = `${owner.phone.slice(-9)}7702@lid`;

    // A LID nobody paired with a number: nobody we know, ignored.
    const unpaired = await reply(line, unknownLid, pollId, "approve");
    await eventually(async () => (await answerRow(line.company.id, unpaired)) !== null);
    expect(await answerRow(line.company.id, unpaired)).toMatchObject({ outcome: "ignored" });

    await line.learnLid(owner.jid, lid);
    const paired = await reply(line, lid, pollId, "approve");
    await eventually(async () => (await answerRow(line.company.id, paired))?.outcome === "applied");
    expect(await answerRow(line.company.id, paired)).toMatchObject({ phone: owner.phone });
    expect(await approvalRow(approvalId)).toMatchObject({ decided_by_user_id: owner.user.userId });
  });

  it("the same inbound message delivered twice is applied once", async () => {
    const { line, owner } = await lineWithOwner();
    const approvalId = await pendingApproval(line);
    const pollId = await notice(line, owner, { type: "approval", id: approvalId });

    const replyId = await reply(line, owner, pollId, "approve");
    await eventually(statusIs(approvalId, "approved"));
    await replyTo(line, owner, "Approved");
    // Redelivered by the bridge (after a failover), and handed over again by the relay (after a crash
    // before its cursor moved).
    await reply(line, owner, pollId, "approve", replyId);
    const voteId = await vote(line, owner, pollId, ["Reject"]);
    await vote(line, owner, pollId, ["Reject"], voteId);
    await replayVote(line, owner, pollId, ["Reject"], voteId);

    expect(await decisionsOf(approvalId)).toHaveLength(1);
    expect(await wakesOf(line.agent.id, "approval_approved")).toHaveLength(1);
    expect(textsTo(line, owner).filter((t) => t.text.startsWith("Approved"))).toHaveLength(1);
    expect(textsTo(line, owner).filter((t) => t.text.startsWith("Already approved"))).toHaveLength(1);
  });

  it("a second member's answer after the decision gets `already approved by <name> at <time>`", async () => {
    const { line, owner } = await lineWithOwner("Olivia");
    const second = await member(line, "Sam");
    const approvalId = await pendingApproval(line);
    const toOwner = await notice(line, owner, { type: "approval", id: approvalId });
    const toSecond = await notice(line, second, { type: "approval", id: approvalId });

    await vote(line, owner, toOwner, ["Approve"]);
    await vote(line, second, toSecond, ["Reject"]);

    const answer = await replyTo(line, second, "Already approved");
    expect(answer.text).toMatch(
      /^Already approved by Olivia at \d{4}-\d\d-\d\d \d\d:\d\d UTC, nothing changed\.$/,
    );
    expect((await approvalRow(approvalId))?.status).toBe("approved");
    expect(await decisionsOf(approvalId)).toHaveLength(1);
  });

  it("a resubmitted approval is asked again as a new poll; a vote on the old poll is refused", async () => {
    const { line, owner } = await lineWithOwner("Olivia");
    const approvalId = await pendingApproval(line);
    const firstPoll = await notice(line, owner, { type: "approval", id: approvalId });
    await reply(line, owner, firstPoll, "changes cap it at $300");
    await eventually(statusIs(approvalId, "revision_requested"));

    const resubmitted = await call("POST", `/api/approvals/${approvalId}/resubmit`, {
      headers: line.agent.headers,
      body: { payload: { title: "budget raise to $300" } },
    });
    expect(resubmitted.status, JSON.stringify(resubmitted.body)).toBe(200);

    let secondPoll = "";
    await eventually(async () => {
      const row = await env.DB.prepare(
        `SELECT wa_message_id FROM line_notices
         WHERE user_id = ? AND subject_type = 'approval' AND subject_id LIKE ? AND status = 'sent'`,
      )
        .bind(owner.user.userId, `${approvalId}:%`)
        .first<{ wa_message_id: string }>();
      secondPoll = row?.wa_message_id ?? "";
      return secondPoll !== "";
    });
    const polls = line.sent(owner.jid).filter((sent) => sent.content.type === "poll");
    expect(polls).toHaveLength(2);
    expect(JSON.stringify(polls[1]?.content)).toContain("asks again, revised, to");

    const stale = await vote(line, owner, firstPoll, ["Approve"]);
    const refusal = await replyTo(line, owner, "earlier version");
    expect(refusal.text).toContain("answer the latest message");
    expect(await answerRow(line.company.id, stale)).toMatchObject({
      outcome: "refused",
      detail: "superseded",
    });
    expect((await approvalRow(approvalId))?.status).toBe("pending");

    await vote(line, owner, secondPoll, ["Approve"]);
    expect(await approvalRow(approvalId)).toMatchObject({
      status: "approved",
      decided_by_user_id: owner.user.userId,
    });
    expect((await decisionsOf(approvalId)).map((row) => row.action)).toEqual([
      "approval.revision_requested",
      "approval.resubmitted",
      "approval.approved",
    ]);
  });

  it("the approvals page says it was answered via WhatsApp, by whom", async () => {
    const { line, owner } = await lineWithOwner("Olivia");
    const colleague = await createUser("OWNER");
    await addMembership(line.company.id, colleague.userId, "member");
    const viaLine = await pendingApproval(line);
    const viaDashboard = await pendingApproval(line);
    await vote(line, owner, await notice(line, owner, { type: "approval", id: viaLine }), ["Approve"]);
    expect(
      (await call("POST", `/api/approvals/${viaDashboard}/reject`, { headers: line.owner.headers, body: {} }))
        .status,
    ).toBe(200);

    const page = await browse(colleague, `/companies/${line.company.id}/approvals`);
    expect(page.status).toBe(200);
    const rows = [...page.html.matchAll(/<tr>[\s\S]*?<\/tr>/g)].map((m) => textOf(m[0]));
    expect(rows.filter((row) => row.includes("answered via WhatsApp by Olivia"))).toHaveLength(1);
    expect(rows.find((row) => row.includes("answered via WhatsApp"))).toContain("approved");
  });
});

describe("questions answered on the line", () => {
  it("a reply quoting the question's notice is the answer, and the asking agent wakes", async () => {
    const { line, owner } = await lineWithOwner("Olivia");
    const { issueId, questionId } = await pendingQuestion(line);
    const noticeId = await notice(line, owner, { type: "question", id: questionId });

    const replyId = await reply(line, owner, noticeId, "Use Acme, they are cheaper");

    await replyTo(line, owner, "Answered");
    const questions = await call<{ items?: unknown[] } | unknown[]>(
      "GET",
      `/api/issues/${issueId}/questions`,
      {
        headers: line.owner.headers,
      },
    );
    expect(JSON.stringify(questions.body)).toContain("Use Acme, they are cheaper");
    const row = await env.DB.prepare("SELECT answer, answered_by_user_id FROM issue_questions WHERE id = ?")
      .bind(questionId)
      .first();
    expect(row).toEqual({ answer: "Use Acme, they are cheaper", answered_by_user_id: owner.user.userId });
    // Marked as answered on the line: the question, its activity row, and the issue page say so.
    expect(JSON.stringify(questions.body)).toContain('"answeredVia":"whatsapp"');
    const activity = await env.DB.prepare(
      "SELECT actor_id, details FROM activity_log WHERE action = 'issue.question_answered' AND entity_id = ?",
    )
      .bind(issueId)
      .first<{ actor_id: string; details: string }>();
    expect(activity?.actor_id).toBe(owner.user.userId);
    expect(JSON.parse(activity?.details ?? "{}")).toMatchObject({ questionId, via: "whatsapp" });
    const colleague = await createUser("OWNER");
    await addMembership(line.company.id, colleague.userId, "member");
    const page = await browse(colleague, `/issues/${issueId}`);
    expect(textOf(page.html)).toContain("answered via WhatsApp: Use Acme, they are cheaper");
    expect(await wakesOf(line.agent.id, "issue_question_answered")).toHaveLength(1);
    expect((await replyTo(line, owner, "Answered")).quoted).toBe(replyId);
  });
});
