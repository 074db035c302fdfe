// A comment on an issue wakes its assignee agent (`issue_commented`), never for its own comments.
import { describe, expect, it } from "vitest";
import { call } from "../../helpers";
import { seedAgent, seedIssue } from "../helpers";
import { type Comment, patchIssue, wakesOf, world } from "./fixtures";

const comment = (headers: Record<string, string>, issueId: string, body: string) =>
  call<Comment>("POST", `/api/issues/${issueId}/comments`, { headers, body: { body } });

describe("comment wakes the assignee", () => {
  it("wakes the assigned agent on a board user's or another agent's comment", async () => {
    const { owner, company, engineer, peer } = await world();
    const issue = await seedIssue(company, { assigneeAgentId: engineer.id });
    const first = await comment(owner.headers, issue.id, "Any progress?");
    expect(first.status).toBe(201);
    expect(await wakesOf(issue.id)).toEqual([
      expect.objectContaining({
        agent_id: engineer.id,
        status: "queued",
        wake_reason: "issue_commented",
        invocation_source: "comment",
        comment_id: first.body.id,
      }),
    ]);
    // A second comment while that run is still queued joins it instead of queueing the work twice.
    expect((await comment(peer.headers, issue.id, "Also see the logs")).status).toBe(201);
    expect(await wakesOf(issue.id)).toHaveLength(1);
  });

  it("does not wake the assignee for its own comment", async () => {
    const { company, engineer } = await world();
    const issue = await seedIssue(company, { assigneeAgentId: engineer.id, status: "in_progress" });
    expect((await comment(engineer.headers, issue.id, "Working on it")).status).toBe(201);
    expect(await wakesOf(issue.id)).toEqual([]);
    const patched = await patchIssue(engineer.headers, issue.id, { comment: "Still working" });
    expect(patched.status).toBe(200);
    expect(await wakesOf(issue.id)).toEqual([]);
  });

  it("wakes once when the comment also mentions the assignee", async () => {
    const { owner, company } = await world();
    const assignee = await seedAgent(company.id, { name: "Grace" });
    const issue = await seedIssue(company, { assigneeAgentId: assignee.id });
    expect((await comment(owner.headers, issue.id, "@Grace please look")).status).toBe(201);
    const wakes = await wakesOf(issue.id);
    expect(wakes).toHaveLength(1);
    expect(wakes[0]).toMatchObject({ agent_id: assignee.id, wake_reason: "issue_comment_mentioned" });
  });

  it("wakes nobody on unassigned, user-assigned, done or cancelled issues", async () => {
    const { owner, company, engineer } = await world();
    const unassigned = await seedIssue(company);
    const done = await seedIssue(company, { assigneeAgentId: engineer.id, status: "done" });
    const cancelled = await seedIssue(company, { assigneeAgentId: engineer.id, status: "cancelled" });
    for (const issue of [unassigned, done, cancelled]) {
      expect((await comment(owner.headers, issue.id, "note")).status).toBe(201);
      expect(await wakesOf(issue.id)).toEqual([]);
    }
    const human = await patchIssue(owner.headers, unassigned.id, { assigneeUserId: owner.userId });
    expect(human.status).toBe(200);
    expect((await comment(owner.headers, unassigned.id, "mine")).status).toBe(201);
    expect(await wakesOf(unassigned.id)).toEqual([]);
  });

  it("records a paused assignee's wake as cancelled with the reason", async () => {
    const { owner, company } = await world();
    const sleeper = await seedAgent(company.id, { status: "paused" });
    const issue = await seedIssue(company, { assigneeAgentId: sleeper.id });
    expect((await comment(owner.headers, issue.id, "wake up")).status).toBe(201);
    expect(await wakesOf(issue.id)).toEqual([
      expect.objectContaining({
        status: "cancelled",
        error_reason: "agent_paused",
        wake_reason: "issue_commented",
      }),
    ]);
  });

  it("PATCH with a comment wakes the assignee; a reassignment with a comment wakes once, as assigned", async () => {
    const { owner, company, engineer, peer } = await world();
    const issue = await seedIssue(company, { assigneeAgentId: engineer.id });
    const patched = await patchIssue(owner.headers, issue.id, { priority: "high", comment: "Bumped" });
    expect(patched.status).toBe(200);
    expect(await wakesOf(issue.id)).toEqual([
      expect.objectContaining({
        agent_id: engineer.id,
        wake_reason: "issue_commented",
        comment_id: patched.body.comment?.id,
      }),
    ]);
    const other = await seedIssue(company, { assigneeAgentId: engineer.id });
    const moved = await patchIssue(owner.headers, other.id, {
      assigneeAgentId: peer.id,
      comment: "Yours now",
    });
    expect(moved.status).toBe(200);
    expect((await wakesOf(other.id)).map((run) => [run.agent_id, run.wake_reason])).toEqual([
      [peer.id, "issue_assigned"],
    ]);
    // A refused PATCH writes neither the comment nor the wake.
    const third = await seedIssue(company, { assigneeAgentId: engineer.id });
    expect((await patchIssue(owner.headers, third.id, { status: "in_review", comment: "?" })).status).toBe(
      422,
    );
    expect(await wakesOf(third.id)).toEqual([]);
  });
});
