// PATCH /issues/:id: the transition table row by row, assignee rules, cancel permissions, parent
// cycles, labels, and the update + comment pair committing together or not at all.
import { describe, expect, it } from "vitest";
import { boardUser, seedAgent, seedIssue } from "../helpers";
import {
  actionsOf,
  type ErrorBody,
  type Issue,
  issueRow,
  linkBlocker,
  newIssue,
  patchIssue,
  rowsOf,
  seedLabel,
  world,
} from "./fixtures";

const ALLOWED: Array<[string, string]> = [
  ["backlog", "todo"],
  ["in_progress", "in_review"],
  ["in_progress", "blocked"],
  ["in_progress", "done"],
  ["in_review", "done"],
  ["in_review", "in_progress"],
  ["blocked", "todo"],
  ["blocked", "in_progress"],
  ["backlog", "cancelled"],
  ["todo", "cancelled"],
  ["in_progress", "cancelled"],
  ["in_review", "cancelled"],
  ["blocked", "cancelled"],
];

const DISALLOWED: Array<[string, string]> = [
  ["backlog", "done"],
  ["backlog", "in_progress"],
  ["todo", "in_progress"],
  ["todo", "done"],
  ["todo", "backlog"],
  ["in_progress", "todo"],
  ["in_review", "blocked"],
  ["blocked", "done"],
  ["done", "todo"],
  ["done", "cancelled"],
  ["cancelled", "todo"],
];

describe("PATCH /issues/:id status moves", () => {
  it("allows every row of the transition table, setting the timestamps", async () => {
    const { owner, company, engineer } = await world();
    for (const [from, to] of ALLOWED) {
      const issue = await seedIssue(company, { status: from, assigneeAgentId: engineer.id });
      // Entering blocked needs something to wait for (blockers.test.ts has the rule itself).
      if (to === "blocked") await linkBlocker(company.id, issue.id, (await seedIssue(company)).id);
      const res = await patchIssue(owner.headers, issue.id, { status: to });
      expect(res.status, `${from} → ${to}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.status).toBe(to);
      const row = await issueRow(issue.id);
      expect(row?.status).toBe(to);
      expect(row?.started_at !== null, `${from} → ${to} started_at`).toBe(to === "in_progress");
      expect(row?.completed_at !== null).toBe(to === "done");
      expect(row?.cancelled_at !== null).toBe(to === "cancelled");
      if (to === "done")
        expect(res.body.completed_at).toBe(new Date(Number(row?.completed_at)).toISOString());
      const [activity] = await rowsOf<{ details: string }>(
        "SELECT details FROM activity_log WHERE entity_id = ? AND action = 'issue.updated'",
        issue.id,
      );
      expect(JSON.parse(activity?.details ?? "{}")).toMatchObject({
        changes: ["status"],
        status: { from, to },
      });
    }
  });

  it("answers 422 with from, to and allowed for moves outside the table", async () => {
    const { owner, company, engineer } = await world();
    for (const [from, to] of DISALLOWED) {
      const issue = await seedIssue(company, { status: from, assigneeAgentId: engineer.id });
      const res = await patchIssue<ErrorBody>(owner.headers, issue.id, { status: to });
      expect(res.status, `${from} → ${to}`).toBe(422);
      expect(res.body.details).toMatchObject({ from, to });
      expect(Array.isArray(res.body.details?.allowed)).toBe(true);
      expect((await issueRow(issue.id))?.status).toBe(from);
      expect(await actionsOf(issue.id)).toEqual([]);
    }
    const todo = await seedIssue(company, { status: "todo", assigneeAgentId: engineer.id });
    const res = await patchIssue<ErrorBody>(owner.headers, todo.id, { status: "in_progress" });
    expect(res.body.error).toContain("checkout");
    expect(res.body.details).toEqual({ from: "todo", to: "in_progress", allowed: ["cancelled"] });
  });

  it("keeps in_progress assigned", async () => {
    const { owner, company, engineer } = await world();
    const blocked = await seedIssue(company, { status: "blocked" });
    expect((await patchIssue(owner.headers, blocked.id, { status: "in_progress" })).status).toBe(422);
    const ok = await patchIssue(owner.headers, blocked.id, {
      status: "in_progress",
      assigneeAgentId: engineer.id,
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: "in_progress", assigneeAgentId: engineer.id });
    expect((await patchIssue(owner.headers, blocked.id, { assigneeAgentId: null })).status).toBe(422);
    const handed = await patchIssue(owner.headers, blocked.id, { assigneeUserId: owner.userId });
    expect(handed.body).toMatchObject({ assigneeUserId: owner.userId, assigneeAgentId: null });
    const back = await patchIssue(owner.headers, blocked.id, { assigneeAgentId: engineer.id });
    expect(back.body).toMatchObject({ assigneeUserId: null, assigneeAgentId: engineer.id });
  });
});

describe("PATCH /issues/:id fields", () => {
  it("updates fields and labels, refuses unassignable agents, both assignees and parent cycles", async () => {
    const { owner, company, engineer } = await world();
    const [red, blue] = [await seedLabel(company.id), await seedLabel(company.id)];
    const top = await newIssue(owner.headers, company, { labelIds: [red] });
    const child = await newIssue(owner.headers, company, { parentId: top.id });
    const res = await patchIssue(engineer.headers, top.id, {
      title: "Renamed",
      description: null,
      priority: "critical",
      labelIds: [blue, red],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ title: "Renamed", priority: "critical" });
    expect([...(res.body.labelIds ?? [])].sort()).toEqual([blue, red].sort());
    expect(await issueRow(top.id)).toMatchObject({ title: "Renamed", priority_rank: 0 });
    expect((await patchIssue(owner.headers, top.id, { labelIds: [] })).body.labelIds).toEqual([]);
    const terminated = await seedAgent(company.id, { status: "terminated" });
    const pending = await seedAgent(company.id, { status: "pending_approval" });
    for (const body of [
      { assigneeAgentId: terminated.id },
      { assigneeAgentId: pending.id },
      { assigneeAgentId: engineer.id, assigneeUserId: owner.userId },
      { assigneeUserId: (await boardUser()).userId },
      { parentId: child.id },
      { parentId: top.id },
      { labelIds: [crypto.randomUUID()] },
    ]) {
      const bad = await patchIssue<ErrorBody>(owner.headers, top.id, body);
      expect(bad.status, JSON.stringify(body)).toBe(422);
    }
    for (const body of [
      { status: "open" },
      { title: "" },
      { nope: 1 },
      { labelIds: "x" },
      { comment: "   " },
    ])
      expect((await patchIssue(owner.headers, top.id, body)).status, JSON.stringify(body)).toBe(400);
    expect(await actionsOf(top.id)).toEqual(["issue.created", "issue.updated", "issue.updated"]);
    const noop = await patchIssue(owner.headers, top.id, { title: "Renamed" });
    expect(noop.status).toBe(200);
    expect(await actionsOf(top.id)).toHaveLength(3);
  });

  it("adds the comment with the update atomically", async () => {
    const { owner, company, engineer } = await world();
    const issue = await seedIssue(company, { status: "in_progress", assigneeAgentId: engineer.id });
    const bad = await patchIssue(engineer.headers, issue.id, { status: "todo", comment: "Going back" });
    expect(bad.status).toBe(422);
    expect(await rowsOf("SELECT id FROM issue_comments WHERE issue_id = ?", issue.id)).toEqual([]);
    expect(await actionsOf(issue.id)).toEqual([]);
    const before = (await issueRow(issue.id))?.updated_at;
    const ok = await patchIssue(engineer.headers, issue.id, {
      status: "in_review",
      comment: "Ready for review",
    });
    expect(ok.status).toBe(200);
    expect(ok.body.comment).toMatchObject({
      body: "Ready for review",
      authorAgentId: engineer.id,
      issueId: issue.id,
    });
    const comments = await rowsOf<{ id: string; body: string; author_agent_id: string }>(
      "SELECT id, body, author_agent_id FROM issue_comments WHERE issue_id = ?",
      issue.id,
    );
    expect(comments).toEqual([
      { id: ok.body.comment?.id, body: "Ready for review", author_agent_id: engineer.id },
    ]);
    expect(await actionsOf(issue.id)).toEqual(["issue.updated", "issue.comment_added"]);
    expect(Number((await issueRow(issue.id))?.updated_at)).toBeGreaterThanOrEqual(Number(before));
    const only = await patchIssue(owner.headers, issue.id, { comment: "Looks good" });
    expect(only.status).toBe(200);
    expect(await actionsOf(issue.id)).toEqual([
      "issue.updated",
      "issue.comment_added",
      "issue.comment_added",
    ]);
  });
});

describe("cancelling", () => {
  async function team() {
    const base = await world();
    const otherLead = await seedAgent(base.company.id, { role: "cto", reportsTo: base.ceo.id });
    const outsider = await seedAgent(base.company.id, { reportsTo: otherLead.id });
    return { ...base, outsider };
  }
  const cancel = (headers: Record<string, string>, id: string) =>
    patchIssue<Issue & ErrorBody>(headers, id, { status: "cancelled" });

  it("is for the board, the creating agent and the managers above it", async () => {
    const { owner, company, engineer, manager, ceo, outsider } = await team();
    const byAgent = () =>
      seedIssue(company, { status: "todo", createdByAgentId: engineer.id, assigneeAgentId: outsider.id });
    for (const headers of [owner.headers, engineer.headers, manager.headers, ceo.headers]) {
      const issue = await byAgent();
      const res = await cancel(headers, issue.id);
      expect(res.status).toBe(200);
      expect(res.body.cancelledAt).not.toBeNull();
    }
  });

  it("is refused to an assignee from another team, a peer, and non-CEO agents on board-created issues", async () => {
    const { owner, company, engineer, peer, manager, ceo, outsider } = await team();
    const crossTeam = await seedIssue(company, {
      status: "in_progress",
      createdByAgentId: engineer.id,
      assigneeAgentId: outsider.id,
    });
    for (const agent of [outsider, peer]) {
      const res = await cancel(agent.headers, crossTeam.id);
      expect(res.status).toBe(403);
      expect(res.body.error).toContain("only the assigning team's manager can cancel this task");
    }
    expect((await issueRow(crossTeam.id))?.status).toBe("in_progress");
    const blocked = await patchIssue(outsider.headers, crossTeam.id, {
      status: "blocked",
      blockedByIssueIds: [(await seedIssue(company)).id],
      comment: "Need access",
    });
    expect(blocked.status).toBe(200);
    const boardMade = await seedIssue(company, { status: "todo", createdByUserId: owner.userId });
    expect((await cancel(manager.headers, boardMade.id)).status).toBe(403);
    expect((await cancel(engineer.headers, boardMade.id)).status).toBe(403);
    expect((await cancel(ceo.headers, boardMade.id)).status).toBe(200);
  });
});
